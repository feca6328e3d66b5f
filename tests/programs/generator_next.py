# entry: take(3)
# breakpoints: 6, 14
def naturals():
    n = 0
    while True:
        yield n
        n += 1


def take(k):
    gen = naturals()
    out = []
    for _ in range(k):
        out.append(next(gen))
    return out
