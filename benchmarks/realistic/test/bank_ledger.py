"""A bank ledger with validating properties, an audit decorator, transfers and rollback on failure."""
# entry: run_ledger([["open", "chk", 500], ["open", "sav", 1000], ["deposit", "chk", 250], ["withdraw", "chk", 900], ["transfer", "sav", "chk", 300], ["transfer", "chk", "nope", 50], ["withdraw", "sav", -5], ["interest", "sav"]])
import functools

OVERDRAFT_LIMIT = 100
INTEREST_RATE = 0.02
AUDIT_LOG = []


class LedgerError(Exception):
    pass


class InsufficientFunds(LedgerError):
    def __init__(self, account, amount):
        super().__init__(f"{account.name}: cannot take {amount}, balance {account.balance}")


def audited(operation):
    @functools.wraps(operation)
    def wrapper(ledger, *args):
        entry = f"{operation.__name__}{args}"
        try:
            result = operation(ledger, *args)
        except LedgerError as error:
            AUDIT_LOG.append(f"FAIL {entry}: {error}")
            raise
        else:
            AUDIT_LOG.append(f"ok   {entry}")
            return result
        finally:
            ledger.operations += 1

    return wrapper


class Account:
    def __init__(self, name, balance):
        self.name = name
        self.balance = balance

    @property
    def balance(self):
        return self._balance

    @balance.setter
    def balance(self, value):
        if value < -OVERDRAFT_LIMIT:
            raise InsufficientFunds(self, self._balance - value)
        self._balance = value

    def __repr__(self):
        return f"Account({self.name!r}, {self.balance})"


class Ledger:
    def __init__(self):
        self.accounts = {}
        self.operations = 0

    def get(self, name):
        if name not in self.accounts:
            raise LedgerError(f"no account {name!r}")
        return self.accounts[name]

    @audited
    def open(self, name, amount):
        self.accounts[name] = Account(name, amount)

    @audited
    def deposit(self, name, amount):
        if amount <= 0:
            raise LedgerError(f"deposit must be positive, got {amount}")
        self.get(name).balance += amount

    @audited
    def withdraw(self, name, amount):
        if amount <= 0:
            raise LedgerError(f"withdrawal must be positive, got {amount}")
        self.get(name).balance -= amount

    @audited
    def transfer(self, source, target, amount):
        src = self.get(source)
        src.balance -= amount
        try:
            self.get(target).balance += amount
        except LedgerError:
            src.balance += amount  # roll back the debit
            raise

    @audited
    def interest(self, name):
        account = self.get(name)
        account.balance = round(account.balance * (1 + INTEREST_RATE), 2)


def run_ledger(commands):
    ledger = Ledger()
    for command in commands:
        action, args = command[0], command[1:]
        try:
            getattr(ledger, action)(*args)
        except LedgerError:
            pass
    for line in AUDIT_LOG:
        print(line)
    return sorted(ledger.accounts.values(), key=lambda a: a.name), ledger.operations
