"""A shopping cart with percentage, buy-X-get-Y and threshold discounts; checkout fails on a bad coupon."""
# entry: checkout([["apple", 3], ["bread", 1], ["cheese", 2], ["apple", 2]], ["SAVE10", "BOGO-APPLE", "FREESHIP", "WELCOME5"])
from dataclasses import dataclass

PRICES = {"apple": 60, "bread": 250, "cheese": 575, "wine": 1299}  # cents
SHIPPING = 499
FREE_SHIPPING_OVER = 2000


class CouponError(Exception):
    """A coupon code that does not exist or cannot apply to this cart."""


@dataclass
class Line:
    sku: str
    quantity: int

    @property
    def subtotal(self):
        return PRICES[self.sku] * self.quantity


class Discount:
    code = "?"

    def amount(self, cart):
        return 0

    def __repr__(self):
        return f"<{type(self).__name__} {self.code}>"


class PercentOff(Discount):
    def __init__(self, code, percent):
        self.code = code
        self.percent = percent

    def amount(self, cart):
        return cart.subtotal() * self.percent // 100


class BuyOneGetOne(Discount):
    def __init__(self, code, sku):
        self.code = code
        self.sku = sku

    def amount(self, cart):
        line = cart.lines.get(self.sku)
        if line is None:
            raise CouponError(f"{self.code} needs {self.sku} in the cart")
        return (line.quantity // 2) * PRICES[self.sku]


class FreeShipping(Discount):
    code = "FREESHIP"

    def amount(self, cart):
        return cart.shipping()


COUPONS = {
    "SAVE10": PercentOff("SAVE10", 10),
    "BOGO-APPLE": BuyOneGetOne("BOGO-APPLE", "apple"),
    "FREESHIP": FreeShipping(),
}


class Cart:
    def __init__(self):
        self.lines = {}
        self.discounts = []

    def add(self, sku, quantity):
        if sku in self.lines:
            self.lines[sku].quantity += quantity
        else:
            self.lines[sku] = Line(sku, quantity)

    def subtotal(self):
        return sum(line.subtotal for line in self.lines.values())

    def shipping(self):
        return 0 if self.subtotal() >= FREE_SHIPPING_OVER else SHIPPING

    def apply(self, code):
        if code not in COUPONS:
            raise CouponError(f"unknown coupon {code!r}")
        self.discounts.append(COUPONS[code])

    def total(self):
        saved = sum(d.amount(self) for d in self.discounts)
        return self.subtotal() + self.shipping() - saved, saved


def checkout(items, codes):
    cart = Cart()
    for sku, quantity in items:
        cart.add(sku, quantity)
    print(f"subtotal {cart.subtotal() / 100:.2f}")
    for code in codes:
        cart.apply(code)
        total, saved = cart.total()
        print(f"after {code}: total {total / 100:.2f} (saved {saved / 100:.2f})")
    return cart.total()
