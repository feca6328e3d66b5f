# parity copy of tests/programs/varargs_kwargs.py; its entry is called at module level (last lines)
# breakpoints: 6, 16
def combine(*args, **kwargs):
    mode = kwargs.get("mode", "sum")
    if mode == "sum":
        total = sum(args)
    else:
        total = 1
        for a in args:
            total *= a
    return total * kwargs.get("scale", 1)


def dispatch(*args, **kwargs):
    first = combine(*args, **kwargs)
    second = combine(*args, mode="prod")
    return first, second


result = dispatch(1, 2, 3, mode="sum", scale=2)
print(result)
