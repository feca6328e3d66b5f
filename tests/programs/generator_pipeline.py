# entry: pipeline(5)
# breakpoints: 10, 16
def numbers(n):
    for i in range(n):
        yield i


def squares(it):
    for x in it:
        yield x * x


def pipeline(n):
    total = 0
    for s in squares(numbers(n)):
        total += s
    return total
