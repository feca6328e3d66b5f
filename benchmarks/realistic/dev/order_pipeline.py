"""An order-processing pipeline of generators: parse, validate, price with discounts, group by customer."""
# entry: process_orders(["1001,ann,widget,3", "1002,bob,gadget,1", "1003,ann,gizmo,0", "bad line", "1004,cy,widget,10", "1005,bob,widget,2", "1006,ann,gadget,2"])

from dataclasses import dataclass
from itertools import groupby

PRICES = {"widget": 2.5, "gadget": 12.0, "gizmo": 7.25}
BULK_QUANTITY = 10


@dataclass(frozen=True)
class Order:
    order_id: int
    customer: str
    product: str
    quantity: int


@dataclass
class PricedOrder:
    order: Order
    total: float
    discount: float


def parse(lines):
    for line in lines:
        parts = line.split(",")
        if len(parts) != 4:
            print(f"skip unparsable: {line!r}")
            continue
        order_id, customer, product, quantity = parts
        yield Order(int(order_id), customer, product, int(quantity))


def valid(orders):
    for order in orders:
        if order.quantity <= 0 or order.product not in PRICES:
            print(f"skip invalid order {order.order_id}")
            continue
        yield order


def discount_rate(order):
    if order.quantity >= BULK_QUANTITY:
        return 0.15
    if order.product == "gadget" and order.quantity >= 2:
        return 0.05
    return 0.0


def priced(orders):
    for order in orders:
        gross = PRICES[order.product] * order.quantity
        rate = discount_rate(order)
        yield PricedOrder(order, round(gross * (1 - rate), 2), round(gross * rate, 2))


def process_orders(lines):
    stream = priced(valid(parse(lines)))
    by_customer = sorted(stream, key=lambda p: p.order.customer)
    summary = {}
    for customer, group in groupby(by_customer, key=lambda p: p.order.customer):
        items = list(group)
        summary[customer] = {
            "orders": [p.order.order_id for p in items],
            "total": round(sum(p.total for p in items), 2),
            "saved": round(sum(p.discount for p in items), 2),
        }
    return summary
