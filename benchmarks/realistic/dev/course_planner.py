"""Plans a course schedule by topological sort of prerequisites, term by term, reporting cycles."""
# entry: plan({"calc2": ["calc1"], "linalg": ["calc1"], "ml": ["linalg", "stats", "prog"], "stats": ["calc2"], "prog": [], "calc1": [], "thesis": ["ml", "writing"]}, 2)

from collections import defaultdict, deque
from itertools import chain

MAX_TERMS = 8


class PlanningError(Exception):
    pass


class CycleFound(PlanningError):
    pass


def all_courses(prereqs):
    return sorted(set(prereqs) | set(chain.from_iterable(prereqs.values())))


def indegrees(prereqs, courses):
    degree = {course: 0 for course in courses}
    unlocks = defaultdict(list)
    for course, needs in prereqs.items():
        for need in needs:
            degree[course] += 1
            unlocks[need].append(course)
    return degree, unlocks


def schedule(prereqs, per_term):
    courses = all_courses(prereqs)
    degree, unlocks = indegrees(prereqs, courses)
    ready = deque(sorted(c for c in courses if degree[c] == 0))
    terms = []
    while ready:
        if len(terms) == MAX_TERMS:
            raise PlanningError("too many terms")
        term = [ready.popleft() for _ in range(min(per_term, len(ready)))]
        terms.append(term)
        for course in term:
            for nxt in sorted(unlocks[course]):
                degree[nxt] -= 1
                if degree[nxt] == 0:
                    ready.append(nxt)
    left = [c for c in courses if degree[c] > 0]
    if left:
        raise CycleFound(f"cannot schedule {left}")
    return terms


def plan(prereqs, per_term):
    try:
        terms = schedule(prereqs, per_term)
    except CycleFound as exc:
        print(f"cycle: {exc}")
        return None
    for number, term in enumerate(terms, start=1):
        print(f"term {number}: {', '.join(term)}")
    return {"terms": len(terms), "plan": terms}
