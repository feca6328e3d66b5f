# entry: product_of([2, 3, 4])
# breakpoints: 7, 13
from functools import reduce


def mul(a, b):
    return a * b


def product_of(xs):
    p = reduce(mul, xs, 1)
    acc = list(__import__("itertools").accumulate(xs, mul))
    return p, acc
