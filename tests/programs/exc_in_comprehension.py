# entry: inverses([2, 0, 4])
# breakpoints: 4, 11
def inv(x):
    return 12 // x


def inverses(xs):
    try:
        return [inv(x) for x in xs]
    except ZeroDivisionError:
        return [inv(x) for x in xs if x]
