"""A memoizing decorator that counts cache hits, applied to staircase and Fibonacci recursions."""
# entry: compare_counts(12, [1, 2, 3])
import functools


def memoize(func):
    cache = {}
    hits = 0

    @functools.wraps(func)
    def wrapper(*args):
        nonlocal hits
        if args in cache:
            hits += 1
            return cache[args]
        result = func(*args)
        cache[args] = result
        return result

    def stats():
        return {"entries": len(cache), "hits": hits}

    wrapper.stats = stats
    return wrapper


@memoize
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@memoize
def climb(steps, moves):
    if steps == 0:
        return 1
    if steps < 0:
        return 0
    return sum(climb(steps - move, moves) for move in moves)


def compare_counts(n, moves):
    ways = climb(n, tuple(moves))
    value = fib(n)
    print(f"fib({n}) = {value}, ways to climb {n} = {ways}")
    return value, ways, fib.stats(), climb.stats()
