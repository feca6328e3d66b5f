"""A priority task scheduler on heapq that runs time slices, ages waiting tasks and records a timeline."""
# entry: schedule([["backup", 3, 5], ["email", 1, 2], ["render", 2, 4], ["index", 3, 3]], 2)
# kind: simulation
import heapq
from dataclasses import dataclass, field
import itertools

AGING_STEP = 1
MIN_PRIORITY = 0


@dataclass(order=True)
class Task:
    priority: int
    order: int
    name: str = field(compare=False)
    remaining: int = field(compare=False)
    waited: int = field(default=0, compare=False)


class Scheduler:
    def __init__(self, quantum):
        self.quantum = quantum
        self.queue = []
        self.counter = itertools.count()
        self.clock = 0
        self.timeline = []

    def submit(self, name, priority, work):
        heapq.heappush(self.queue, Task(priority, next(self.counter), name, work))

    def age_waiting(self):
        aged = []
        for task in self.queue:
            task.waited += 1
            if task.waited % 2 == 0 and task.priority > MIN_PRIORITY:
                task.priority -= AGING_STEP
            aged.append(task)
        heapq.heapify(aged)
        self.queue = aged

    def run_slice(self):
        task = heapq.heappop(self.queue)
        used = min(self.quantum, task.remaining)
        task.remaining -= used
        self.timeline.append((self.clock, task.name, used))
        self.clock += used
        self.age_waiting()
        if task.remaining > 0:
            task.order = next(self.counter)
            heapq.heappush(self.queue, task)
            return None
        return task.name, self.clock

    def run(self):
        finished = []
        while self.queue:
            done = self.run_slice()
            if done is not None:
                finished.append(done)
        return finished


def schedule(jobs, quantum):
    scheduler = Scheduler(quantum)
    for name, priority, work in jobs:
        scheduler.submit(name, priority, work)
    finished = scheduler.run()
    for start, name, used in scheduler.timeline:
        print(f"t={start:>2} {name:<7} ran {used}")
    return finished
