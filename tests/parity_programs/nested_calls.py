# parity copy of tests/programs/nested_calls.py; its entry is called at module level (last lines)
# breakpoints: 5, 9, 18
def leaf(x):
    y = x * 2
    return y + 1


def middle(x):
    return leaf(x) + leaf(x + 1)


def inner(x):
    return middle(x)


def outer(x):
    r = inner(x)
    r = r - 1
    return r


result = outer(3)
print(result)
