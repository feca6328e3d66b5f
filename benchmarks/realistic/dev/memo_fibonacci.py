"""Counts climbing paths and Fibonacci numbers with a hand-written memoizing decorator."""
# entry: report(12, [1, 2, 3])


def memoize(fn):
    cache = {}

    def wrapper(*args):
        if args not in cache:
            cache[args] = fn(*args)
        return cache[args]

    wrapper.cache = cache
    return wrapper


@memoize
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@memoize
def ways(steps, moves):
    if steps == 0:
        return 1
    total = 0
    for move in moves:
        if move <= steps:
            total += ways(steps - move, moves)
    return total


def report(n, moves):
    result = {"fib": fib(n), "ways": ways(n // 2, tuple(moves))}
    result["cached"] = len(fib.cache) + len(ways.cache)
    return result
