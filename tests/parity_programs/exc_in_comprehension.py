# parity copy of tests/programs/exc_in_comprehension.py; its entry is called at module level (last lines)
# breakpoints: 4, 11
def inv(x):
    return 12 // x


def inverses(xs):
    try:
        return [inv(x) for x in xs]
    except ZeroDivisionError:
        return [inv(x) for x in xs if x]


result = inverses([2, 0, 4])
print(result)
