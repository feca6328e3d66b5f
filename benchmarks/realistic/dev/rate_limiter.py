"""A sliding-window rate limiter made from a closure over a deque of request times."""
# entry: replay([0, 1, 2, 3, 3, 10, 11, 12, 12, 25], 3, 10)

from collections import deque


def make_limiter(max_requests, window):
    recent = deque()
    rejected = 0

    def allow(now):
        nonlocal rejected
        while recent and recent[0] <= now - window:
            recent.popleft()
        if len(recent) < max_requests:
            recent.append(now)
            return True
        rejected += 1
        return False

    def stats():
        return {"in_window": len(recent), "rejected": rejected}

    return allow, stats


def replay(times, max_requests, window):
    allow, stats = make_limiter(max_requests, window)
    decisions = []
    for t in times:
        ok = allow(t)
        decisions.append("ok" if ok else "429")
    summary = stats()
    print(" ".join(decisions))
    return summary
