"""A sliding-window rate limiter that decides which API requests are allowed per client."""
# entry: replay_requests([("alice", 0), ("alice", 1), ("bob", 1), ("alice", 2), ("alice", 3), ("alice", 12), ("bob", 13), ("alice", 13)], 3, 10)
# kind: simulation
from collections import deque, defaultdict

REJECT_MESSAGE = "429 Too Many Requests"


class SlidingWindowLimiter:
    def __init__(self, max_requests, window):
        self.max_requests = max_requests
        self.window = window
        self.history = defaultdict(deque)

    def _evict(self, client, now):
        stamps = self.history[client]
        while stamps and now - stamps[0] >= self.window:
            stamps.popleft()
        return len(stamps)

    def allow(self, client, now):
        in_window = self._evict(client, now)
        if in_window >= self.max_requests:
            return False
        self.history[client].append(now)
        return True


def replay_requests(requests, max_requests, window):
    limiter = SlidingWindowLimiter(max_requests, window)
    accepted = 0
    log = []
    for client, now in requests:
        if limiter.allow(client, now):
            accepted += 1
            log.append(f"{now:>3} {client}: 200 OK")
        else:
            log.append(f"{now:>3} {client}: {REJECT_MESSAGE}")
    for line in log:
        print(line)
    return accepted, len(requests) - accepted
