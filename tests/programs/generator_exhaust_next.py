# entry: drain([1, 2])
# breakpoints: 15, 16
def items(xs):
    for x in xs:
        yield x


def drain(xs):
    it = items(xs)
    got = []
    while True:
        try:
            got.append(next(it))
        except StopIteration:
            break
    return got
