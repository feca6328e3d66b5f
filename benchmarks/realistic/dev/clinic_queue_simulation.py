"""Discrete-event simulation of a walk-in clinic with two doctors, a waiting room and an event heap."""
# entry: simulate([[0, 12], [2, 5], [3, 20], [5, 8], [6, 4], [15, 10], [16, 6], [30, 3]], 2)
# kind: simulation

import heapq
from collections import deque, namedtuple
from dataclasses import dataclass, field

ARRIVAL, DEPARTURE = "arrival", "departure"

# Heap entries order by time, then by seq (unique), so kind and patient are never compared.
Event = namedtuple("Event", "time seq kind patient")


@dataclass
class Clinic:
    doctors: int
    busy: int = 0
    waiting: deque = field(default_factory=deque)
    waits: dict = field(default_factory=dict)
    arrived: dict = field(default_factory=dict)


class Simulator:
    def __init__(self, visits, doctors):
        self.clinic = Clinic(doctors)
        self.durations = {}
        self.events = []
        self.seq = 0
        for patient, (arrival, duration) in enumerate(visits):
            self.durations[patient] = duration
            self.schedule(arrival, ARRIVAL, patient)

    def schedule(self, time, kind, patient):
        heapq.heappush(self.events, Event(time, self.seq, kind, patient))
        self.seq += 1

    def start_visit(self, now, patient):
        clinic = self.clinic
        clinic.busy += 1
        clinic.waits[patient] = now - clinic.arrived[patient]
        self.schedule(now + self.durations[patient], DEPARTURE, patient)

    def handle(self, event):
        clinic = self.clinic
        if event.kind == ARRIVAL:
            clinic.arrived[event.patient] = event.time
            if clinic.busy < clinic.doctors:
                self.start_visit(event.time, event.patient)
            else:
                clinic.waiting.append(event.patient)
        else:
            clinic.busy -= 1
            if clinic.waiting:
                self.start_visit(event.time, clinic.waiting.popleft())

    def run(self):
        now = 0
        while self.events:
            event = heapq.heappop(self.events)
            now = event.time
            self.handle(event)
        return now


def simulate(visits, doctors):
    sim = Simulator(visits, doctors)
    closing = sim.run()
    waits = sim.clinic.waits
    longest = max(waits, key=waits.get)
    print(f"closed at {closing}, longest wait: patient {longest} ({waits[longest]} min)")
    return {"closing": closing, "mean_wait": sum(waits.values()) / len(waits), "waits": waits}
