# breakpoints: 11, 15
def double(x):
    return 2 * x


def inc(x):
    return x + 1


def combine(a, b):
    c = a * b
    return c


result = combine(double(3), inc(double(1)))
print(result)
