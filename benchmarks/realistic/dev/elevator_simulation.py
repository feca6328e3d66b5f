"""A tick-based simulation of one elevator serving floor calls, modelled as a state machine."""
# entry: simulate_building([[0, 0, 5], [1, 3, 0], [2, 6, 2], [6, 1, 4], [9, 4, 6]], 7, 30)
# kind: simulation, state_machine

from collections import deque
from dataclasses import dataclass, field

IDLE, MOVING_UP, MOVING_DOWN, DOORS_OPEN = "idle", "up", "down", "doors_open"
DOOR_TICKS = 2


@dataclass
class Passenger:
    pid: int
    arrival: int
    origin: int
    destination: int
    boarded: int = -1
    delivered: int = -1


@dataclass
class Elevator:
    floors: int
    floor: int = 0
    state: str = IDLE
    door_timer: int = 0
    riders: list = field(default_factory=list)
    stops: set = field(default_factory=set)
    log: list = field(default_factory=list)

    def set_state(self, tick, state):
        if state != self.state:
            self.log.append((tick, self.state, state, self.floor))
            self.state = state

    def direction_to(self, target):
        if target > self.floor:
            return MOVING_UP
        if target < self.floor:
            return MOVING_DOWN
        return DOORS_OPEN


class Building:
    def __init__(self, floors, calls):
        self.elevator = Elevator(floors)
        self.pending = deque(
            Passenger(i, arrival, origin, destination) for i, (arrival, origin, destination) in enumerate(calls)
        )
        self.waiting = []
        self.done = []

    def arrivals(self, tick):
        while self.pending and self.pending[0].arrival == tick:
            passenger = self.pending.popleft()
            self.waiting.append(passenger)
            self.elevator.stops.add(passenger.origin)

    def exchange(self, tick):
        car = self.elevator
        for passenger in list(car.riders):
            if passenger.destination == car.floor:
                passenger.delivered = tick
                car.riders.remove(passenger)
                self.done.append(passenger)
        for passenger in list(self.waiting):
            if passenger.origin == car.floor:
                passenger.boarded = tick
                self.waiting.remove(passenger)
                car.riders.append(passenger)
                car.stops.add(passenger.destination)
        car.stops.discard(car.floor)

    def next_target(self):
        car = self.elevator
        if not car.stops:
            return None
        ahead = [s for s in car.stops if (s > car.floor) == (car.state != MOVING_DOWN)]
        candidates = ahead or list(car.stops)
        return min(candidates, key=lambda s: abs(s - car.floor))

    def tick(self, now):
        car = self.elevator
        self.arrivals(now)
        if car.state == DOORS_OPEN:
            car.door_timer -= 1
            if car.door_timer > 0:
                return
            self.exchange(now)
        target = self.next_target()
        if target is None:
            car.set_state(now, IDLE)
            return
        state = car.direction_to(target)
        car.set_state(now, state)
        if state == DOORS_OPEN:
            car.door_timer = DOOR_TICKS
            return
        car.floor += 1 if state == MOVING_UP else -1
        if car.floor in car.stops:
            car.set_state(now, DOORS_OPEN)
            car.door_timer = DOOR_TICKS

    def finished(self):
        return not (self.pending or self.waiting or self.elevator.riders)


def trip_times(passengers):
    times = {}
    for p in passengers:
        times[p.pid] = (p.boarded - p.arrival, p.delivered - p.boarded)
    return times


def simulate_building(calls, floors, max_ticks):
    building = Building(floors, calls)
    now = 0
    while now < max_ticks:
        building.tick(now)
        if building.finished():
            break
        now += 1
    else:
        print("gave up with passengers still waiting")
    times = trip_times(building.done)
    for pid, (wait, ride) in sorted(times.items()):
        print(f"passenger {pid}: waited {wait}, rode {ride}")
    return {"ticks": now, "transitions": len(building.elevator.log), "times": times}
