"""A lending library: members, copies, loans, holds and late fees; the last loan breaks the member limit on purpose."""
# entry: run_library([["borrow", "m1", "Dune", 1], ["borrow", "m2", "Dune", 2], ["hold", "m2", "Dune", 2], ["return", "m1", "Dune", 20], ["borrow", "m2", "Emma", 21], ["borrow", "m2", "Ulysses", 22], ["renew", "m2", "Emma", 30], ["borrow", "m1", "Ulysses", 30], ["renew", "m2", "Ulysses", 31], ["borrow", "m2", "Dune", 41]])

from collections import defaultdict, deque

LOAN_DAYS = 14
FEE_PER_DAY = 0.25


class LibraryError(Exception):
    pass


class NotAvailable(LibraryError):
    def __init__(self, title):
        super().__init__(f"no copy of {title!r} is available")
        self.title = title


class LimitReached(LibraryError):
    def __init__(self, member, limit):
        super().__init__(f"{member.name} already has {limit} loans")
        self.member = member


class Item:
    def __init__(self, title, copies):
        self.title = title
        self.copies = copies
        self.out = 0
        self.holds = deque()

    @property
    def available(self):
        return self.copies - self.out

    def __repr__(self):
        return f"Item({self.title!r}, {self.available}/{self.copies})"


class Member:
    limit = 3

    def __init__(self, member_id, name):
        self.member_id = member_id
        self.name = name
        self.loans = {}
        self._fees = 0.0

    @property
    def fees(self):
        return self._fees

    @fees.setter
    def fees(self, value):
        if value < 0:
            raise ValueError("fees cannot be negative")
        self._fees = round(value, 2)

    def can_borrow(self):
        return len(self.loans) < self.limit and self.fees < 5


class Student(Member):
    limit = 2

    def __init__(self, member_id, name, school):
        super().__init__(member_id, name)
        self.school = school


class Library:
    def __init__(self, items, members):
        self.items = {item.title: item for item in items}
        self.members = {m.member_id: m for m in members}
        self.history = defaultdict(list)

    def borrow(self, member_id, title, day):
        member, item = self.members[member_id], self.items[title]
        if not member.can_borrow():
            raise LimitReached(member, member.limit)
        if item.available == 0:
            raise NotAvailable(title)
        if item.holds and item.holds[0] != member_id:
            raise NotAvailable(title)
        if item.holds:
            item.holds.popleft()
        item.out += 1
        member.loans[title] = day + LOAN_DAYS
        self.history[member_id].append(title)
        return member.loans[title]

    def give_back(self, member_id, title, day):
        member, item = self.members[member_id], self.items[title]
        due = member.loans.pop(title)
        item.out -= 1
        late = max(0, day - due)
        member.fees += late * FEE_PER_DAY
        if item.holds:
            waiting = self.members[item.holds[0]]
            print(f"notify {waiting.name}: {title} is ready")
        return late

    def renew(self, member_id, title, day):
        member, item = self.members[member_id], self.items[title]
        if item.holds:
            raise NotAvailable(title)
        if day > member.loans[title]:
            return None
        member.loans[title] += LOAN_DAYS
        return member.loans[title]

    def overdue(self, day):
        report = []
        for member in self.members.values():
            for title, due in sorted(member.loans.items()):
                if due < day:
                    report.append((member.name, title, day - due))
        return report

    def hold(self, member_id, title):
        item = self.items[title]
        if member_id not in item.holds:
            item.holds.append(member_id)
        return len(item.holds)


def apply(library, action, member_id, title, day):
    if action == "borrow":
        due = library.borrow(member_id, title, day)
        return f"{member_id} borrows {title}, due day {due}"
    if action == "return":
        late = library.give_back(member_id, title, day)
        return f"{member_id} returns {title}" + (f", {late} days late" if late else "")
    if action == "renew":
        due = library.renew(member_id, title, day)
        return f"{member_id} cannot renew {title}" if due is None else f"{member_id} renews {title} to day {due}"
    position = library.hold(member_id, title)
    return f"{member_id} holds {title} (#{position})"


def run_library(actions):
    library = Library(
        [Item("Dune", 1), Item("Emma", 2), Item("Ulysses", 1)],
        [Member("m1", "Ada"), Student("m2", "Ben", "North High")],
    )
    for action, member_id, title, day in actions:
        try:
            print(apply(library, action, member_id, title, day))
        except NotAvailable as exc:
            print(f"refused: {exc}")
            if action == "borrow":
                library.hold(member_id, title)
    print("overdue on day 60:", library.overdue(60))
    fees = {m.name: m.fees for m in library.members.values()}
    return {"fees": fees, "items": list(library.items.values()), "history": dict(library.history)}
