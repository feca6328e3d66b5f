"""A shop checkout that builds a basket, applies promotion rules kept in closures and prints a receipt."""
# entry: checkout([["apple", 6], ["bread", 1], ["milk", 2], ["apple", 2], ["cheese", 1]], ["3for2:apple", "pct10:cheese", "bogus"])

from collections import OrderedDict

PRICES = {"apple": 0.4, "bread": 2.2, "milk": 1.1, "cheese": 4.5}


def three_for_two(product):
    def rule(basket):
        quantity = basket.get(product, 0)
        return (quantity // 3) * PRICES[product]

    return rule


def percent_off(product, percent):
    def rule(basket):
        return basket.get(product, 0) * PRICES[product] * percent / 100

    return rule


def make_rules(codes):
    rules = []
    for code in codes:
        kind, _, product = code.partition(":")
        if kind == "3for2":
            rules.append((code, three_for_two(product)))
        elif kind.startswith("pct"):
            rules.append((code, percent_off(product, int(kind[3:]))))
        else:
            print(f"ignoring promotion {code!r}")
    return rules


def build_basket(items):
    basket = OrderedDict()
    for product, quantity in items:
        basket[product] = basket.get(product, 0) + quantity
    return basket


def receipt_lines(basket, savings):
    lines = []
    for product, quantity in basket.items():
        lines.append(f"{product:<8}{quantity:>3} x {PRICES[product]:.2f} = {quantity * PRICES[product]:6.2f}")
    for code, amount in savings:
        lines.append(f"  promo {code:<12} -{amount:.2f}")
    return lines


def checkout(items, codes):
    basket = build_basket(items)
    savings = []
    for code, rule in make_rules(codes):
        amount = round(rule(basket), 2)
        if amount:
            savings.append((code, amount))
    gross = sum(q * PRICES[p] for p, q in basket.items())
    total = round(gross - sum(a for _, a in savings), 2)
    for line in receipt_lines(basket, savings):
        print(line)
    print(f"TOTAL {total:.2f}")
    return total
