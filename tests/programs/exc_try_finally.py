# entry: guarded([1, 2, 3])
# breakpoints: 8, 10
def work(xs):
    total = 0
    try:
        for x in xs:
            total += x
        return total
    finally:
        xs.append(total)


def guarded(xs):
    r = work(xs)
    return r, xs
