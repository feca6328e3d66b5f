"""Warehouse order fulfilment: stock across bins, order batching, backorders, an LRU price cache and a JSON report."""
# entry: fulfil_orders({"BOLT": [["A1", 40], ["B2", 15]], "NUT": [["A2", 30]], "GEAR": [["C1", 4], ["C2", 3]], "BELT": []}, [{"id": "o-1", "customer": "acme", "priority": "rush", "lines": [["BOLT", 50], ["GEAR", 2]]}, {"id": "o-2", "customer": "bolt-co", "priority": "normal", "lines": [["NUT", 10], ["BELT", 1]]}, {"id": "o-3", "customer": "acme", "priority": "normal", "lines": [["GEAR", 6], ["NUT", 25]]}, {"id": "o-4", "customer": "zenith", "priority": "rush", "lines": [["BOLT", 10]]}])
import json
from collections import OrderedDict, namedtuple, defaultdict
from dataclasses import dataclass, field
from itertools import chain, groupby

UNIT_PRICES = {"BOLT": 0.12, "NUT": 0.05, "GEAR": 7.5, "BELT": 12.0}
PRIORITY_ORDER = {"rush": 0, "normal": 1}
CACHE_SIZE = 2

Pick = namedtuple("Pick", "sku bin quantity")


class FulfilmentError(Exception):
    pass


class OutOfStock(FulfilmentError):
    def __init__(self, sku, missing):
        super().__init__(f"{sku}: short by {missing}")
        self.sku = sku
        self.missing = missing


class LRUCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.items = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key, compute):
        if key in self.items:
            self.items.move_to_end(key)
            self.hits += 1
            return self.items[key]
        self.misses += 1
        value = compute(key)
        self.items[key] = value
        if len(self.items) > self.capacity:
            self.items.popitem(last=False)
        return value


def counted(func):
    calls = 0

    def wrapper(*args, **kwargs):
        nonlocal calls
        calls += 1
        return func(*args, **kwargs)

    wrapper.calls = lambda: calls
    return wrapper


@dataclass
class Bin:
    name: str
    quantity: int


@dataclass
class OrderLine:
    sku: str
    quantity: int


@dataclass
class Order:
    ident: str
    customer: str
    priority: str
    lines: list = field(default_factory=list)
    picks: list = field(default_factory=list)
    backorders: list = field(default_factory=list)

    @property
    def complete(self):
        return not self.backorders


@dataclass
class RushOrder(Order):
    surcharge: float = 5.0


class Warehouse:
    def __init__(self, stock):
        self.bins = {sku: [Bin(name, qty) for name, qty in bins] for sku, bins in stock.items()}

    def available(self, sku):
        return sum(b.quantity for b in self.bins.get(sku, []))

    @counted
    def pick(self, sku, quantity):
        """Take quantity of sku from the fullest bins first; raise OutOfStock when there is not enough."""
        short = quantity - self.available(sku)
        if short > 0:
            raise OutOfStock(sku, short)
        picks = []
        for bin_ in sorted(self.bins[sku], key=lambda b: -b.quantity):
            if quantity == 0:
                break
            take = min(bin_.quantity, quantity)
            if take == 0:
                continue
            bin_.quantity -= take
            quantity -= take
            picks.append(Pick(sku, bin_.name, take))
        return picks


def make_order(raw):
    kind = RushOrder if raw["priority"] == "rush" else Order
    lines = [OrderLine(sku, qty) for sku, qty in raw["lines"]]
    return kind(raw["id"], raw["customer"], raw["priority"], lines)


def by_priority(orders):
    yield from sorted(orders, key=lambda order: (PRIORITY_ORDER[order.priority], order.ident))


def process(orders, warehouse):
    for order in orders:
        for line in order.lines:
            try:
                order.picks.extend(warehouse.pick(line.sku, line.quantity))
            except OutOfStock as error:
                partial = line.quantity - error.missing
                if partial > 0:
                    order.picks.extend(warehouse.pick(line.sku, partial))
                order.backorders.append(OrderLine(line.sku, error.missing))
        yield order


def price_lookup(sku):
    return UNIT_PRICES[sku]


def invoice(order, cache):
    amount = 0.0
    for pick in order.picks:
        amount += pick.quantity * cache.get(pick.sku, price_lookup)
    if isinstance(order, RushOrder):
        amount += order.surcharge
    return round(amount, 2)


def fulfil_orders(stock, raw_orders):
    warehouse = Warehouse(stock)
    cache = LRUCache(CACHE_SIZE)
    finished = list(process(by_priority(make_order(raw) for raw in raw_orders), warehouse))
    invoices = {order.ident: invoice(order, cache) for order in finished}
    per_customer = {}
    for customer, group in groupby(sorted(finished, key=lambda o: o.customer), key=lambda o: o.customer):
        per_customer[customer] = round(sum(invoices[o.ident] for o in group), 2)
    backordered = defaultdict(int)
    for line in chain.from_iterable(order.backorders for order in finished):
        backordered[line.sku] += line.quantity
    for order in finished:
        status = "complete" if order.complete else "partial"
        bins = ", ".join(f"{p.quantity}x{p.sku}@{p.bin}" for p in order.picks) or "nothing"
        print(f"{order.ident} ({order.priority}, {status}): {bins}")
    report = {
        "invoices": invoices,
        "per_customer": per_customer,
        "backordered": dict(sorted(backordered.items())),
        "pick_calls": Warehouse.pick.calls(),
        "price_cache": {"hits": cache.hits, "misses": cache.misses},
        "left": {sku: warehouse.available(sku) for sku in sorted(warehouse.bins)},
    }
    return json.dumps(report, sort_keys=True)
