"""A laundromat, minute by minute: washers step through fill, wash, rinse and spin while customers queue or give up."""
# entry: run_laundromat([[0, "Ana", "quick"], [1, "Ben", "heavy"], [1, "Cy", "quick"], [2, "Dee", "normal"], [3, "Eli", "quick"], [9, "Flo", "normal"]], 2, 26)
# kind: simulation, state_machine

from collections import deque
from dataclasses import dataclass

PROGRAMS = {
    "quick": {"fill": 1, "wash": 2, "rinse": 1, "spin": 1},
    "normal": {"fill": 1, "wash": 3, "rinse": 2, "spin": 1},
    "heavy": {"fill": 2, "wash": 4, "rinse": 2, "spin": 2},
}
NEXT_PHASE = {"fill": "wash", "wash": "rinse", "rinse": "spin", "spin": "done"}
PRICES = {"quick": 3, "normal": 4, "heavy": 6}
PATIENCE = 5


@dataclass
class Customer:
    name: str
    program: str
    arrived: int


@dataclass
class Washer:
    number: int
    phase: str = "idle"
    left: int = 0
    customer: Customer | None = None

    def load(self, customer):
        self.customer = customer
        self.phase = "fill"
        self.left = PROGRAMS[customer.program]["fill"]

    def tick(self):
        """Advance one minute; return the phase entered, if the washer changed phase."""
        if self.phase in ("idle", "done"):
            return None
        self.left -= 1
        if self.left > 0:
            return None
        self.phase = NEXT_PHASE[self.phase]
        if self.phase != "done":
            self.left = PROGRAMS[self.customer.program][self.phase]
        return self.phase

    def unload(self):
        customer, self.customer, self.phase = self.customer, None, "idle"
        return customer


def run_laundromat(arrivals, washer_count, closing):
    arriving = deque(Customer(name, program, minute) for minute, name, program in arrivals)
    waiting = deque()
    washers = [Washer(number) for number in range(1, washer_count + 1)]
    served, gave_up, takings = [], [], 0

    def all_quiet():
        return not arriving and not waiting and all(w.phase == "idle" for w in washers)

    minute = 0
    while minute < closing:
        while arriving and arriving[0].arrived <= minute:
            waiting.append(arriving.popleft())
        for washer in washers:
            phase = washer.tick()
            if phase == "done":
                customer = washer.unload()
                served.append(f"{customer.name}@{minute}")
                print(f"{minute:>2}: washer {washer.number} finished {customer.name}'s {customer.program} wash")
        while waiting and minute - waiting[0].arrived > PATIENCE:
            gave_up.append(waiting.popleft().name)
        for washer in washers:
            if not waiting:
                break
            if washer.phase != "idle":
                continue
            customer = waiting.popleft()
            washer.load(customer)
            takings += PRICES[customer.program]
        if all_quiet():
            break
        minute += 1
    else:
        print(f"closing at {closing} with {len(waiting)} still waiting")
    return {"served": served, "gave_up": gave_up, "takings": takings, "minute": minute}
