# entry: outer(3)
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
