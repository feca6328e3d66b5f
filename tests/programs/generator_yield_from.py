# entry: collect(2)
# breakpoints: 5, 11
def inner(n):
    for i in range(n):
        yield i
    return n * 100


def outer(n):
    result = yield from inner(n)
    yield result


def collect(n):
    return list(outer(n))
