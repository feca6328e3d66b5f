# parity copy of tests/programs/mutual_recursion.py; its entry is called at module level (last lines)
# breakpoints: 6, 11
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


result = is_even(5)
print(result)
