"""An inventory ledger of stock movements per warehouse, with reorder suggestions."""
# entry: close_day([["in", "WH1", "bolt", 500], ["out", "WH1", "bolt", 120], ["in", "WH2", "nut", 40], ["out", "WH2", "nut", 35], ["move", "WH1", "WH2", "bolt", 100], ["out", "WH2", "washer", 5]])

from collections import defaultdict
from dataclasses import dataclass, field

REORDER_LEVEL = {"bolt": 300, "nut": 20, "washer": 50}


@dataclass
class Movement:
    kind: str
    warehouse: str
    sku: str
    quantity: int


@dataclass
class Ledger:
    stock: dict = field(default_factory=lambda: defaultdict(int))
    movements: list = field(default_factory=list)
    rejected: list = field(default_factory=list)

    def record(self, movement):
        key = (movement.warehouse, movement.sku)
        if movement.kind == "out" and self.stock[key] < movement.quantity:
            self.rejected.append(movement)
            return False
        sign = 1 if movement.kind == "in" else -1
        self.stock[key] += sign * movement.quantity
        self.movements.append(movement)
        return True

    def totals(self):
        per_sku = defaultdict(int)
        for (_, sku), quantity in self.stock.items():
            per_sku[sku] += quantity
        return dict(per_sku)


def parse(row):
    if row[0] == "move":
        _, source, target, sku, quantity = row
        return [Movement("out", source, sku, quantity), Movement("in", target, sku, quantity)]
    kind, warehouse, sku, quantity = row
    return [Movement(kind, warehouse, sku, quantity)]


def reorder_suggestions(totals):
    suggestions = {}
    for sku, level in REORDER_LEVEL.items():
        have = totals.get(sku, 0)
        if have < level:
            suggestions[sku] = level - have
    return suggestions


def close_day(rows):
    ledger = Ledger()
    for row in rows:
        for movement in parse(row):
            if not ledger.record(movement):
                print(f"rejected {movement.kind} of {movement.quantity} {movement.sku} at {movement.warehouse}")
    totals = ledger.totals()
    return {
        "totals": totals,
        "reorder": reorder_suggestions(totals),
        "moves": len(ledger.movements),
        "rejected": ledger.rejected,
    }
