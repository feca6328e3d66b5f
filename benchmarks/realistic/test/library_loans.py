"""A small library loan system with members, copies, holds and overdue fines."""
# entry: run_day([("borrow", "ana", "dune"), ("borrow", "ben", "dune"), ("hold", "ben", "dune"), ("borrow", "ana", "emma"), ("borrow", "ana", "odyssey"), ("return", "ana", "dune", 20), ("borrow", "ben", "dune"), ("return", "ana", "emma", 9)])
from dataclasses import dataclass, field

LOAN_DAYS = 14
FINE_PER_DAY = 25  # cents
MAX_LOANS = 2


class LibraryError(Exception):
    pass


class NotAvailable(LibraryError):
    def __init__(self, title, holder):
        super().__init__(f"{title!r} is out with {holder}")
        self.title = title


class LimitReached(LibraryError):
    pass


@dataclass
class Book:
    title: str
    holder: str = None
    holds: list = field(default_factory=list)


@dataclass
class Member:
    name: str
    loans: list = field(default_factory=list)
    fines: int = 0


class Library:
    def __init__(self, titles):
        self.books = {title: Book(title) for title in titles}
        self.members = {}

    def member(self, name):
        if name not in self.members:
            self.members[name] = Member(name)
        return self.members[name]

    def borrow(self, name, title):
        book = self.books[title]
        person = self.member(name)
        if book.holder is not None:
            raise NotAvailable(title, book.holder)
        if book.holds and book.holds[0] != name:
            raise NotAvailable(title, f"hold for {book.holds[0]}")
        if len(person.loans) >= MAX_LOANS:
            raise LimitReached(f"{name} already has {MAX_LOANS} loans")
        if book.holds:
            book.holds.pop(0)
        book.holder = name
        person.loans.append(title)
        return f"{name} borrowed {title}"

    def place_hold(self, name, title):
        self.books[title].holds.append(name)
        return f"{name} holds {title}"

    def give_back(self, name, title, days_kept):
        book = self.books[title]
        person = self.member(name)
        person.loans.remove(title)
        book.holder = None
        late = max(0, days_kept - LOAN_DAYS)
        person.fines += late * FINE_PER_DAY
        return f"{name} returned {title}, {late} days late"


def run_day(actions):
    library = Library(["dune", "emma", "odyssey"])
    messages = []
    for action in actions:
        verb, name, title = action[:3]
        try:
            if verb == "borrow":
                messages.append(library.borrow(name, title))
            elif verb == "hold":
                messages.append(library.place_hold(name, title))
            else:
                messages.append(library.give_back(name, title, action[3]))
        except LibraryError as error:
            messages.append(f"refused: {error}")
    fines = {name: m.fines for name, m in library.members.items() if m.fines}
    return messages, fines
