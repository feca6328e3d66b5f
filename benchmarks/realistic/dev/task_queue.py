"""A priority task queue for a build server; popping from the drained queue raises on purpose."""
# entry: run_builds([["lint", 3], ["compile", 1], ["test", 2], ["docs", 5]], 5)

import heapq
from collections import namedtuple

Task = namedtuple("Task", "priority order name")


class EmptyQueueError(Exception):
    pass


class TaskQueue:
    def __init__(self):
        self._heap = []
        self._counter = 0

    def push(self, name, priority):
        heapq.heappush(self._heap, Task(priority, self._counter, name))
        self._counter += 1

    def pop(self):
        if not self._heap:
            raise EmptyQueueError("no tasks left to run")
        return heapq.heappop(self._heap)

    def __len__(self):
        return len(self._heap)


def run_task(task, log):
    log.append(f"{task.name} (p{task.priority})")
    return len(task.name) * 10


def run_builds(jobs, slots):
    queue = TaskQueue()
    for name, priority in jobs:
        queue.push(name, priority)
    log = []
    elapsed = 0
    for _ in range(slots):
        task = queue.pop()
        elapsed += run_task(task, log)
        print(f"ran {task.name}, {len(queue)} queued, {elapsed}s elapsed")
    return log
