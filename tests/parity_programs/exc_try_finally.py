# parity copy of tests/programs/exc_try_finally.py; its entry is called at module level (last lines)
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


result = guarded([1, 2, 3])
print(result)
