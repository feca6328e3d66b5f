# entry: apply_all(5)
# breakpoints: 4, 9
def inc(x): return x + 1
def dbl(x): return x * 2


def apply_all(x):
    for fn in (inc, dbl, inc): x = fn(x)
    return x
