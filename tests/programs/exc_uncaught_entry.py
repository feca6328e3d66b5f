# entry: run([3, 0])
# breakpoints: 4, 10
def ratio(a, b):
    return a // b


def run(xs):
    out = []
    for x in xs:
        out.append(ratio(12, x))
    return out
