"""A vending machine as a state machine that takes coins, vends products and returns change."""
# entry: run_machine([["coin", 25], ["select", "A1"], ["coin", 100], ["select", "A1"], ["select", "B2"], ["coin", 50], ["cancel"], ["coin", 200], ["select", "C3"], ["select", "B2"]])
# kind: state_machine

IDLE, HAS_MONEY, SOLD_OUT = "idle", "has_money", "sold_out"
COINS = (5, 10, 25, 50, 100, 200)


class VendingMachine:
    def __init__(self, products):
        self.products = products  # code -> [name, price, count]
        self.state = IDLE
        self.credit = 0
        self.bank = 0
        self.transitions = []

    def _go(self, state):
        self.transitions.append((self.state, state))
        self.state = state

    def insert(self, coin):
        if coin not in COINS:
            return f"rejected coin {coin}"
        if self.state == SOLD_OUT:
            return f"sold out, returned {coin}"
        self.credit += coin
        if self.state == IDLE:
            self._go(HAS_MONEY)
        return f"credit {self.credit}"

    def select(self, code):
        if self.state != HAS_MONEY:
            return "insert coins first"
        if code not in self.products:
            return f"no product {code}"
        name, price, count = self.products[code]
        if count == 0:
            return f"{name} is sold out"
        if self.credit < price:
            return f"{name} costs {price}, credit {self.credit}"
        self.products[code][2] -= 1
        self.bank += price
        change = make_change(self.credit - price)
        self.credit = 0
        self._go(SOLD_OUT if self.all_empty() else IDLE)
        return f"vend {name}, change {change}"

    def cancel(self):
        refund = make_change(self.credit)
        self.credit = 0
        if self.state == HAS_MONEY:
            self._go(IDLE)
        return f"refund {refund}"

    def all_empty(self):
        return all(count == 0 for _, _, count in self.products.values())


def make_change(amount):
    coins = []
    for coin in sorted(COINS, reverse=True):
        while amount >= coin:
            coins.append(coin)
            amount -= coin
    return coins


def run_machine(events):
    machine = VendingMachine({"A1": ["cola", 120, 2], "B2": ["chips", 75, 1], "C3": ["gum", 30, 0]})
    for event in events:
        if event[0] == "coin":
            message = machine.insert(event[1])
        elif event[0] == "select":
            message = machine.select(event[1])
        else:
            message = machine.cancel()
        print(f"[{machine.state}] {message}")
    return {"bank": machine.bank, "transitions": machine.transitions}
