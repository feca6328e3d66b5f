# entry: outer_fn(2)
# breakpoints: 3, 9
def helper(v):
    return v + 1


def outer_fn(x):
    y = helper(x)
    return helper(y)
