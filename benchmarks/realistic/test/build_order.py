"""Topological ordering of build steps with Kahn's algorithm, plus depth-first cycle reporting."""
# entry: plan_builds({"app": ["lib", "assets"], "lib": ["codegen", "config"], "assets": ["config"], "codegen": ["config"], "config": [], "tests": ["app"]}, {"a": ["b"], "b": ["c"], "c": ["a"], "d": []})
from collections import deque, defaultdict


class CycleError(Exception):
    def __init__(self, cycle):
        super().__init__(" -> ".join(cycle))
        self.cycle = cycle


def kahn_order(deps):
    indegree = {step: len(needs) for step, needs in deps.items()}
    users = defaultdict(list)
    for step, needs in deps.items():
        for need in needs:
            users[need].append(step)
    ready = deque(sorted(step for step, degree in indegree.items() if degree == 0))
    order = []
    while ready:
        step = ready.popleft()
        order.append(step)
        for user in sorted(users[step]):
            indegree[user] -= 1
            if indegree[user] == 0:
                ready.append(user)
    if len(order) < len(deps):
        raise CycleError(find_cycle(deps))
    return order


def find_cycle(deps):
    state = {}
    path = []

    def visit(step):
        state[step] = "active"
        path.append(step)
        for need in deps[step]:
            if state.get(need) == "active":
                return path[path.index(need):] + [need]
            if need not in state:
                found = visit(need)
                if found:
                    return found
        path.pop()
        state[step] = "done"
        return None

    for step in sorted(deps):
        if step not in state:
            cycle = visit(step)
            if cycle:
                return cycle
    return []


def depth(deps, step, memo):
    if step not in memo:
        memo[step] = 1 + max((depth(deps, need, memo) for need in deps[step]), default=0)
    return memo[step]


def plan_builds(*graphs):
    plans = []
    for deps in graphs:
        try:
            order = kahn_order(deps)
        except CycleError as error:
            plans.append(f"cycle: {error}")
            continue
        memo = {}
        levels = {step: depth(deps, step, memo) for step in order}
        plans.append(order)
        print(f"order: {order}, critical path length {max(levels.values())}")
    return plans
