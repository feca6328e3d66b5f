# entry: make(3, 4)
# breakpoints: 10, 18
class Rect:
    def __init__(self, w, h):
        self.w = max(0, w)
        self.h = h

    @property
    def area(self):
        return self.w * self.h

    @property
    def width(self):
        return self.w

    @width.setter
    def width(self, value):
        self.w = max(0, value)


def make(w, h):
    r = Rect(w, h)
    a1 = r.area
    r.width = 10
    return a1, r.area
