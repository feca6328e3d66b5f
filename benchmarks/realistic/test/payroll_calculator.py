"""A payroll calculator for salaried, hourly and commissioned employees with tax brackets."""
# entry: run_payroll([["salaried", "Dana", 78000], ["hourly", "Eli", 22.5, 46], ["commissioned", "Fay", 30000, 41000], ["hourly", "Gus", 18.0, 30]])

TAX_BRACKETS = [(1000, 0.10), (3000, 0.20), (None, 0.30)]
OVERTIME_AFTER = 40
OVERTIME_RATE = 1.5
PERIODS_PER_YEAR = 26


class Employee:
    def __init__(self, name):
        self.name = name

    def gross(self):
        raise NotImplementedError

    def net(self):
        gross = self.gross()
        return round(gross - income_tax(gross), 2)


class Salaried(Employee):
    def __init__(self, name, annual):
        super().__init__(name)
        self.annual = annual

    @property
    def annual(self):
        return self._annual

    @annual.setter
    def annual(self, value):
        if value <= 0:
            raise ValueError("salary must be positive")
        self._annual = value

    def gross(self):
        return round(self.annual / PERIODS_PER_YEAR, 2)


class Hourly(Employee):
    def __init__(self, name, rate, hours):
        super().__init__(name)
        self.rate = rate
        self.hours = hours

    @property
    def hours(self):
        return self._hours

    @hours.setter
    def hours(self, value):
        if not 0 <= value <= 80:
            raise ValueError(f"impossible hours: {value}")
        self._hours = value

    def gross(self):
        regular = min(self.hours, OVERTIME_AFTER)
        overtime = self.hours - regular
        return round(regular * self.rate + overtime * self.rate * OVERTIME_RATE, 2)


class Commissioned(Salaried):
    def __init__(self, name, annual, sales):
        super().__init__(name, annual)
        self.sales = sales

    def gross(self):
        base = super().gross()
        return round(base + self.sales * 0.05 / PERIODS_PER_YEAR * 2, 2)


def income_tax(amount):
    tax = 0.0
    lower = 0
    for upper, rate in TAX_BRACKETS:
        if upper is None or amount <= upper:
            tax += (amount - lower) * rate
            break
        tax += (upper - lower) * rate
        lower = upper
    return round(tax, 2)


def build(row):
    kind, rest = row[0], row[1:]
    makers = {"salaried": Salaried, "hourly": Hourly, "commissioned": Commissioned}
    return makers[kind](*rest)


def run_payroll(rows):
    staff = [build(row) for row in rows]
    total = 0.0
    slips = []
    for person in staff:
        gross, net = person.gross(), person.net()
        total += gross
        slips.append((person.name, type(person).__name__, gross, net))
        print(f"{person.name:<5} {type(person).__name__:<13} gross {gross:>9.2f} net {net:>9.2f}")
    return slips, round(total, 2)
