"""An elevator bank simulation: two cars, a dispatcher and a door state machine, stepped tick by tick."""
# entry: simulate([[0, 0, 5], [1, 3, 0], [2, 6, 2], [5, 1, 4], [8, 4, 0]], 6, 40)
# kind: simulation, state_machine
from collections import deque, namedtuple
from dataclasses import dataclass, field
from enum import Enum

DOOR_OPEN_TICKS = 2
CAPACITY = 4

Request = namedtuple("Request", "time origin destination")


class Phase(Enum):
    IDLE = "idle"
    MOVING = "moving"
    DOORS_OPEN = "doors_open"


@dataclass
class Passenger:
    ident: int
    origin: int
    destination: int
    requested_at: int
    boarded_at: int = -1


@dataclass
class Car:
    name: str
    floor: int = 0
    phase: Phase = Phase.IDLE
    direction: int = 0
    door_timer: int = 0
    riders: list = field(default_factory=list)
    stops: set = field(default_factory=set)

    def add_stop(self, floor):
        self.stops.add(floor)

    def choose_direction(self):
        if not self.stops:
            return 0
        if self.direction > 0 and any(stop > self.floor for stop in self.stops):
            return 1
        if self.direction < 0 and any(stop < self.floor for stop in self.stops):
            return -1
        nearest = min(self.stops, key=lambda stop: (abs(stop - self.floor), stop))
        return (nearest > self.floor) - (nearest < self.floor)


class Building:
    def __init__(self, top_floor, car_names):
        self.top_floor = top_floor
        self.cars = [Car(name) for name in car_names]
        self.waiting = {floor: deque() for floor in range(top_floor + 1)}
        self.delivered = []
        self.events = []

    def log(self, tick, message):
        self.events.append(f"t{tick:02d} {message}")

    def dispatch(self, passenger):
        def cost(car):
            distance = abs(car.floor - passenger.origin)
            heading_away = car.direction and (passenger.origin - car.floor) * car.direction < 0
            return distance + (6 if heading_away else 0) + len(car.stops)

        best = min(self.cars, key=lambda car: (cost(car), car.name))
        best.add_stop(passenger.origin)
        return best

    def board_and_alight(self, car, tick):
        staying = []
        for rider in car.riders:
            if rider.destination == car.floor:
                self.delivered.append((rider.ident, tick - rider.requested_at))
                self.log(tick, f"{car.name} drops p{rider.ident} at {car.floor}")
            else:
                staying.append(rider)
        car.riders = staying
        queue = self.waiting[car.floor]
        left_behind = deque()
        while queue:
            passenger = queue.popleft()
            if len(car.riders) >= CAPACITY:
                left_behind.append(passenger)
                continue
            passenger.boarded_at = tick
            car.riders.append(passenger)
            car.add_stop(passenger.destination)
            self.log(tick, f"{car.name} picks up p{passenger.ident} at {car.floor}")
        self.waiting[car.floor] = left_behind
        for passenger in left_behind:
            self.dispatch(passenger)

    def step_car(self, car, tick):
        if car.phase is Phase.DOORS_OPEN:
            car.door_timer -= 1
            if car.door_timer > 0:
                return
            car.phase = Phase.IDLE
        if car.floor in car.stops:
            car.stops.discard(car.floor)
            car.phase = Phase.DOORS_OPEN
            car.door_timer = DOOR_OPEN_TICKS
            self.board_and_alight(car, tick)
            return
        car.direction = car.choose_direction()
        if car.direction == 0:
            car.phase = Phase.IDLE
            return
        car.phase = Phase.MOVING
        car.floor = max(0, min(self.top_floor, car.floor + car.direction))

    def busy(self):
        return any(car.stops or car.riders for car in self.cars) or any(self.waiting.values())


def utilisation(events, car_names):
    moves = {name: 0 for name in car_names}
    for line in events:
        parts = line.split()
        if len(parts) > 2 and parts[1] in moves and parts[2] in ("picks", "drops"):
            moves[parts[1]] += 1
    return moves


def arrivals(requests):
    for ident, (time, origin, destination) in enumerate(requests, start=1):
        yield Passenger(ident, origin, destination, time)


def simulate(raw_requests, top_floor, max_ticks):
    building = Building(top_floor, ["A", "B"])
    pending = deque(arrivals(Request(*item) for item in raw_requests))
    tick = 0
    while tick < max_ticks:
        while pending and pending[0].requested_at == tick:
            passenger = pending.popleft()
            building.waiting[passenger.origin].append(passenger)
            car = building.dispatch(passenger)
            building.log(tick, f"p{passenger.ident} calls at {passenger.origin}, sent {car.name}")
        for car in building.cars:
            building.step_car(car, tick)
        tick += 1
        if not pending and not building.busy():
            break
    else:
        building.log(tick, "simulation stopped at the tick limit")
    for line in building.events:
        print(line)
    waits = [wait for _, wait in building.delivered]
    average = sum(waits) / len(waits) if waits else 0.0
    return tick, sorted(building.delivered), round(average, 2), utilisation(building.events, ["A", "B"])
