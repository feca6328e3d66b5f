# entry: first_negative([3, 1, -2, 5])
# breakpoints: 6, 13
def scan(xs):
    for x in xs:
        if x < 0:
            return
        yield x


def first_negative(xs):
    seen = 0
    for v in scan(xs):
        seen += v
    return seen
