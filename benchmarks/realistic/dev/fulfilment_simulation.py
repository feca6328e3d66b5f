"""An order-fulfilment simulation: a priority queue of timed events, stock reservations, kits, restocks and a backlog."""
# entry: run_fulfilment(["O1 ann DESK-KIT*1 @0", "O2 bob PEN*4 @1", "O3 cy LAMP*2 @1", "O4 dee MILK*3 @2", "O5 eve PEN*9 @3", "bad order", "O6 fay GLUE*1 @4", "O7 gus MILK*1 @10"], [["LAMP", 3, 2], ["MILK", 2, 5]], 12)
# kind: simulation

import heapq
import re
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field

ORDER_RE = re.compile(r"^(O\d+)\s+([a-z]+)\s+([A-Z][A-Z-]*)\*(\d+)\s+@(\d+)$")
PRIORITY = {"restock": 0, "order": 1, "retry": 2, "ship": 3}
SHIP_DELAY = 2
RETRY_DELAY = 3
MAX_BACKLOG = 3
LOW_STOCK = 2
KITS = {"DESK-KIT": {"LAMP": 1, "PEN": 2, "PAD": 1}}
CATALOG = {
    "LAMP": (18.5, 1),
    "PEN": (1.25, 10),
    "PAD": (3.0, 4),
    "MILK": (0.99, 2),
}


class FulfilmentError(Exception):
    """Anything that stops one order from being filled."""


class UnknownSku(FulfilmentError):
    def __init__(self, sku):
        super().__init__(f"unknown sku {sku}")
        self.sku = sku


class OutOfStock(FulfilmentError):
    def __init__(self, sku, wanted, available):
        super().__init__(f"{sku}: wanted {wanted}, only {available}")
        self.sku = sku
        self.shortfall = wanted - available


class BacklogFull(FulfilmentError):
    pass


@dataclass(order=True)
class Event:
    time: int
    priority: int
    seq: int
    kind: str = field(compare=False)
    payload: dict = field(compare=False, default_factory=dict)


@dataclass
class Order:
    order_id: str
    customer: str
    sku: str
    quantity: int
    placed: int
    attempts: int = 0
    status: str = "new"


class Product:
    def __init__(self, sku, price, stock):
        self.sku = sku
        self.price = price
        self._stock = 0
        self.stock = stock

    def __repr__(self):
        return f"Product({self.sku}, stock={self.stock})"

    @property
    def stock(self):
        return self._stock

    @stock.setter
    def stock(self, value):
        if not isinstance(value, int):
            raise TypeError(f"stock of {self.sku} must be an int")
        if value < 0:
            raise ValueError(f"stock of {self.sku} cannot go negative ({value})")
        self._stock = value

    def take(self, quantity, now):
        if quantity > self.stock:
            raise OutOfStock(self.sku, quantity, self.stock)
        self.stock -= quantity
        return round(self.price * quantity, 2)


class PerishableProduct(Product):
    def __init__(self, sku, price, stock, shelf_life):
        super().__init__(sku, price, stock)
        self.shelf_life = shelf_life
        self.received = 0

    def take(self, quantity, now):
        if now - self.received > self.shelf_life:
            print(f"  {self.sku} expired at t={now}, discarding {self.stock}")
            self.stock = 0
        return super().take(quantity, now)

    def restock(self, quantity, now):
        self.stock += quantity
        self.received = now


class EventQueue:
    def __init__(self):
        self._heap = []
        self._seq = 0

    def push(self, time, kind, **payload):
        self._seq += 1
        heapq.heappush(self._heap, Event(time, PRIORITY[kind], self._seq, kind, payload))

    def pop(self):
        return heapq.heappop(self._heap)

    def __len__(self):
        return len(self._heap)


class Warehouse:
    def __init__(self, catalog):
        self.products = {}
        for sku, (price, stock) in catalog.items():
            if sku == "MILK":
                self.products[sku] = PerishableProduct(sku, price, stock, shelf_life=4)
            else:
                self.products[sku] = Product(sku, price, stock)
        self.shipped = Counter()
        self.revenue = 0.0

    def components(self, sku, quantity):
        """The stock items an order line needs: kits expand, recursively, into their parts."""
        if sku in KITS:
            needed = defaultdict(int)
            for part, per_kit in KITS[sku].items():
                for item, count in self.components(part, per_kit * quantity).items():
                    needed[item] += count
            return dict(needed)
        if sku not in self.products:
            raise UnknownSku(sku)
        return {sku: quantity}

    def check(self, needed):
        for sku, quantity in needed.items():
            available = self.products[sku].stock
            if quantity > available:
                raise OutOfStock(sku, quantity, available)

    def fill(self, order, now):
        needed = self.components(order.sku, order.quantity)
        self.check(needed)
        total = 0.0
        for sku, quantity in needed.items():
            total += self.products[sku].take(quantity, now)
            self.shipped[sku] += quantity
        self.revenue = round(self.revenue + total, 2)
        return total

    def low_stock(self):
        for sku, product in sorted(self.products.items()):
            if product.stock <= LOW_STOCK:
                yield sku, product.stock


def reorder_plan(low, horizon):
    """Which low items to reorder, and when: one line per item, after the simulated horizon."""
    plan = []
    for offset, (sku, stock) in enumerate(low, start=1):
        plan.append(f"{sku}: {stock} left, reorder at t={horizon + offset}")
    return plan


def parse_orders(lines):
    for line in lines:
        match = ORDER_RE.match(line)
        if match is None:
            print(f"reject line {line!r}")
            continue
        order_id, customer, sku, quantity, placed = match.groups()
        yield Order(order_id, customer, sku, int(quantity), int(placed))


def positive(orders):
    for order in orders:
        if order.quantity <= 0:
            print(f"reject {order.order_id}: quantity {order.quantity}")
            continue
        yield order


class Simulation:
    def __init__(self, warehouse, horizon):
        self.warehouse = warehouse
        self.horizon = horizon
        self.queue = EventQueue()
        self.backlog = deque()
        self.orders = {}
        self.log = []
        self.failures = Counter()

    def schedule_orders(self, orders):
        for order in orders:
            self.orders[order.order_id] = order
            self.queue.push(order.placed, "order", order_id=order.order_id)

    def schedule_restocks(self, restocks):
        for sku, quantity, time in restocks:
            self.queue.push(time, "restock", sku=sku, quantity=quantity)

    def enqueue_backlog(self, order):
        if len(self.backlog) >= MAX_BACKLOG:
            raise BacklogFull(f"backlog full, dropping {order.order_id}")
        self.backlog.append(order.order_id)
        order.status = "backlog"

    def attempt(self, order, now):
        order.attempts += 1
        try:
            total = self.warehouse.fill(order, now)
        except OutOfStock as exc:
            self.failures["out_of_stock"] += 1
            print(f"t={now} {order.order_id} short: {exc}")
            if order.attempts < 2:
                self.queue.push(now + RETRY_DELAY, "retry", order_id=order.order_id)
                order.status = "waiting"
            else:
                self.enqueue_backlog(order)
            return False
        finally:
            self.log.append((now, order.order_id, order.attempts))
        order.status = "filled"
        self.queue.push(now + SHIP_DELAY, "ship", order_id=order.order_id, total=total)
        return True

    def handle(self, event):
        now = event.time
        if event.kind == "restock":
            product = self.warehouse.products[event.payload["sku"]]
            if isinstance(product, PerishableProduct):
                product.restock(event.payload["quantity"], now)
            else:
                product.stock += event.payload["quantity"]
            print(f"t={now} restock {product!r}")
            self.drain_backlog(now)
        elif event.kind in ("order", "retry"):
            order = self.orders[event.payload["order_id"]]
            try:
                self.attempt(order, now)
            except UnknownSku as exc:
                order.status = "rejected"
                self.failures["unknown_sku"] += 1
                print(f"t={now} {order.order_id} rejected: {exc}")
            except BacklogFull as exc:
                order.status = "dropped"
                self.failures["backlog_full"] += 1
                print(f"t={now} {exc}")
        elif event.kind == "ship":
            order = self.orders[event.payload["order_id"]]
            order.status = "shipped"
            print(f"t={now} ship {order.order_id} to {order.customer}: {event.payload['total']:.2f}")

    def drain_backlog(self, now):
        waiting = len(self.backlog)
        while waiting:
            waiting -= 1
            order = self.orders[self.backlog.popleft()]
            try:
                self.warehouse.fill(order, now)
            except OutOfStock:
                self.backlog.append(order.order_id)
                continue
            order.status = "filled"
            self.queue.push(now + SHIP_DELAY, "ship", order_id=order.order_id, total=0.0)

    def run(self):
        processed = 0
        while len(self.queue):
            event = self.queue.pop()
            if event.time > self.horizon:
                print(f"horizon {self.horizon} reached with {len(self.queue) + 1} events left")
                break
            self.handle(event)
            processed += 1
        else:
            print("all events processed")
        return processed


def summarise(simulation, processed):
    by_status = defaultdict(list)
    for order in simulation.orders.values():
        by_status[order.status].append(order.order_id)
    stock = {sku: product.stock for sku, product in simulation.warehouse.products.items()}
    return {
        "events": processed,
        "statuses": {status: sorted(ids) for status, ids in sorted(by_status.items())},
        "shipped_units": dict(simulation.warehouse.shipped.most_common()),
        "revenue": simulation.warehouse.revenue,
        "failures": dict(simulation.failures),
        "backlog": list(simulation.backlog),
        "stock": stock,
        "reorder": reorder_plan(simulation.warehouse.low_stock(), simulation.horizon),
    }


def run_fulfilment(order_lines, restocks, horizon):
    warehouse = Warehouse(CATALOG)
    simulation = Simulation(warehouse, horizon)
    simulation.schedule_orders(positive(parse_orders(order_lines)))
    simulation.schedule_restocks(restocks)
    processed = simulation.run()
    return summarise(simulation, processed)
