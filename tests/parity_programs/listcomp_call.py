# parity copy of tests/programs/listcomp_call.py; its entry is called at module level (last lines)
# breakpoints: 4, 9
def square(x):
    return x * x


def transform(xs):
    ys = [square(x) for x in xs]
    ys.sort()
    return ys


result = transform([3, 1, 2])
print(result)
