"""A small hotel's front desk: bookings by room type, check-in and check-out with bills; the last suite booking finds the hotel full."""
# entry: front_desk([["book", "Ito", "double", 1, 3], ["book", "Moss", "double", 2, 5], ["book", "Ito", "single", 2, 4], ["cancel", "Ito", "single"], ["checkin", "Moss", 2], ["checkin", "Zed", 2], ["reprice", "double", 0], ["reprice", "double", 90], ["book", "Park", "suite", 3, 6], ["checkout", "Ito", 3], ["checkout", "Moss", 5], ["book", "Lane", "suite", 4, 5]])

from collections import defaultdict

ROOMS = [("101", "double", 80), ("102", "double", 80), ("103", "single", 55), ("201", "suite", 150)]
LOYALTY_DISCOUNT = 0.1
WEEKEND_NIGHTS = {5, 6}
REGULARS = {"Moss": 2}


class BookingError(Exception):
    pass


class RoomTaken(BookingError):
    pass


class UnknownGuest(BookingError):
    pass


class HotelFull(BookingError):
    def __init__(self, kind, start, end):
        super().__init__(f"no {kind} free for nights {start}-{end}")
        self.kind = kind


class Room:
    def __init__(self, number, kind, rate):
        self.number, self.kind = number, kind
        self.rates = []
        self.rate = rate
        self.stays = []

    @property
    def rate(self):
        """The current nightly rate; every rate the room has had stays in self.rates."""
        return self.rates[-1]

    @rate.setter
    def rate(self, value):
        if value > 0:
            self.rates.append(value)
        else:
            raise BookingError(f"room {self.number}: rate must be positive, not {value}")

    def reserve(self, guest, start, end):
        for taken_start, taken_end, _ in self.stays:
            if start < taken_end and taken_start < end:
                raise RoomTaken(f"{self.number} is taken for nights {taken_start}-{taken_end}")
        self.stays.append((start, end, guest))

    def nightly(self, night):
        return self.rate

    def __repr__(self):
        return f"Room({self.number}, {self.kind}, {self.rate}/night, {len(self.stays)} stays)"


class Suite(Room):
    def __init__(self, number, rate):
        super().__init__(number, "suite", rate)

    def nightly(self, night):
        surcharge = 30 if night % 7 in WEEKEND_NIGHTS else 0
        return super().nightly(night) + surcharge


class Hotel:
    def __init__(self, rooms):
        self.rooms = [Suite(number, rate) if kind == "suite" else Room(number, kind, rate) for number, kind, rate in rooms]
        self.bookings = defaultdict(list)
        self.visits = defaultdict(int)

    def book(self, guest, kind, start, end):
        for room in self.rooms:
            if room.kind != kind:
                continue
            try:
                room.reserve(guest, start, end)
            except RoomTaken:
                continue
            self.bookings[guest].append([room, start, end, "booked"])
            return room.number
        raise HotelFull(kind, start, end)

    def booking(self, guest, state, kind=None):
        for entry in self.bookings.get(guest, []):
            if entry[3] == state and kind in (None, entry[0].kind):
                return entry
        raise UnknownGuest(f"no {state} booking for {guest}")

    def cancel(self, guest, kind):
        entry = self.booking(guest, "booked", kind)
        room, start, end, _ = entry
        room.stays.remove((start, end, guest))
        entry[3] = "cancelled"

    def check_in(self, guest, night):
        entry = self.booking(guest, "booked")
        if night < entry[1]:
            raise BookingError(f"{guest} is booked from night {entry[1]}, not {night}")
        entry[3] = "in"
        return entry[0].number

    def check_out(self, guest, night):
        entry = self.booking(guest, "in")
        room, start, _, _ = entry
        total = sum(room.nightly(n) for n in range(start, night))
        if self.visits[guest] > 0:
            total = round(total * (1 - LOYALTY_DISCOUNT), 2)
        self.visits[guest] += 1
        entry[3] = "out"
        return total

    def reprice(self, kind, rate):
        for room in self.rooms:
            if room.kind == kind:
                room.rate = rate


def front_desk(actions):
    hotel = Hotel(ROOMS)
    hotel.visits.update(REGULARS)
    ledger = []
    for action, *args in actions:
        try:
            if action == "book":
                result = hotel.book(*args)
            elif action == "cancel":
                result = hotel.cancel(*args)
            elif action == "checkin":
                result = hotel.check_in(*args)
            elif action == "checkout":
                result = hotel.check_out(*args)
            else:
                result = hotel.reprice(*args)
        except HotelFull as exc:
            print(f"closing the desk: {exc}")
            raise
        except BookingError as exc:
            print(f"{action} refused: {exc}")
            continue
        ledger.append((action, args[0], result))
    return ledger
