# breakpoints: 7, 14
class Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def __eq__(self, other):
        return (self.x, self.y) == (other.x, other.y)

    def __iter__(self):
        yield self.x
        yield self.y

    def __repr__(self):
        return f"Vec({self.x}, {self.y})"


v = Vec(1, 2) + Vec(3, 4)
print(v == Vec(4, 6), list(v), v)
