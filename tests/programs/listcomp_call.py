# entry: transform([3, 1, 2])
# breakpoints: 4, 9
def square(x):
    return x * x


def transform(xs):
    ys = [square(x) for x in xs]
    ys.sort()
    return ys
