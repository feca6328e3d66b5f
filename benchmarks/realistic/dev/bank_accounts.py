"""Bank accounts with overdraft rules, interest and transfers that roll back on failure."""
# entry: run_month([["deposit", "alice", 500], ["withdraw", "bob", 80], ["transfer", "alice", "bob", 700], ["transfer", "alice", "bob", 200], ["withdraw", "carol", 10], ["interest"]])

from dataclasses import dataclass, field


class BankError(Exception):
    pass


class InsufficientFunds(BankError):
    def __init__(self, account, amount):
        self.shortfall = amount - account.available()
        super().__init__(f"{account.owner} is short by {self.shortfall}")


class UnknownAccount(BankError):
    pass


@dataclass(repr=False)
class Account:
    owner: str
    _balance: float = 0
    history: list = field(default_factory=list)

    @property
    def balance(self):
        return self._balance

    @balance.setter
    def balance(self, value):
        self.history.append(value - self._balance)
        self._balance = value

    def deposit(self, amount):
        self.balance = self.balance + amount

    def withdraw(self, amount):
        if amount > self.available():
            raise InsufficientFunds(self, amount)
        self.balance = self.balance - amount

    def available(self):
        return self.balance

    def __repr__(self):
        return f"{type(self).__name__}({self.owner!r}, {self.balance})"


@dataclass(repr=False)
class CheckingAccount(Account):
    overdraft: int = 100

    def available(self):
        return self.balance + self.overdraft


class SavingsAccount(Account):
    RATE = 0.02

    def add_interest(self):
        interest = round(self.balance * self.RATE, 2)
        self.deposit(interest)
        return interest


class Bank:
    def __init__(self, accounts):
        self.accounts = {a.owner: a for a in accounts}
        self.log = []

    def find(self, owner):
        if owner not in self.accounts:
            raise UnknownAccount(owner)
        return self.accounts[owner]

    def transfer(self, source, target, amount):
        src, dst = self.find(source), self.find(target)
        snapshot = (src.balance, dst.balance)
        try:
            src.withdraw(amount)
            dst.deposit(amount)
        except BankError:
            src._balance, dst._balance = snapshot
            raise
        finally:
            self.log.append(("transfer", source, target, amount))

    def apply(self, op):
        kind = op[0]
        if kind == "deposit":
            self.find(op[1]).deposit(op[2])
        elif kind == "withdraw":
            self.find(op[1]).withdraw(op[2])
        elif kind == "transfer":
            self.transfer(op[1], op[2], op[3])
        elif kind == "interest":
            for account in self.accounts.values():
                if isinstance(account, SavingsAccount):
                    account.add_interest()


def run_month(operations):
    bank = Bank([SavingsAccount("alice", 300), CheckingAccount("bob", 50)])
    failures = 0
    for op in operations:
        try:
            bank.apply(op)
        except InsufficientFunds as exc:
            failures += 1
            print(f"declined: {exc}")
        except UnknownAccount as exc:
            failures += 1
            print(f"no account {exc}")
    print(sorted(bank.accounts.values(), key=lambda a: a.owner))
    return {"failures": failures, "log": len(bank.log), "alice": bank.find("alice").history}
