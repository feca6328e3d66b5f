# breakpoints: 5, 14
def risky(xs):
    for x in xs:
        if x < 0:
            raise ValueError(x)
        yield x * 2


got = []
try:
    for v in risky([1, 2, -1, 4]):
        got.append(v)
except ValueError as e:
    got.append(str(e))
print(got)
