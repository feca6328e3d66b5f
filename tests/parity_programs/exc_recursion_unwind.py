# parity copy of tests/programs/exc_recursion_unwind.py; its entry is called at module level (last lines)
# breakpoints: 5, 13
def dive(n):
    if n == 0:
        raise LookupError("bottom")
    return dive(n - 1) + 1


def safe_depth(n):
    try:
        return dive(n)
    except LookupError as e:
        return str(e)


result = safe_depth(4)
print(result)
