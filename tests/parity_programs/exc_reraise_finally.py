# parity copy of tests/programs/exc_reraise_finally.py; its entry is called at module level (last lines)
# breakpoints: 7, 14
def deep(n):
    try:
        return 10 // (n - 1)
    finally:
        n += 1


def mid(n):
    try:
        return deep(n)
    except ZeroDivisionError:
        raise KeyError(n)


def outer(n):
    try:
        return mid(n)
    except KeyError as k:
        return repr(k)


result = outer(1)
print(result)
