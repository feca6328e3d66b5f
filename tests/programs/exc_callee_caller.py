# breakpoints: 4, 14
def parse(s):
    if not s.isdigit():
        raise ValueError("bad: " + s)
    return int(s)


def parse_all(items):
    out = []
    for s in items:
        try:
            out.append(parse(s))
        except ValueError as err:
            out.append(-1)
    return out


print(parse_all(["1", "x", "3"]))
