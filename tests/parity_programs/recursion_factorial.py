# parity copy of tests/programs/recursion_factorial.py; its entry is called at module level (last lines)
# breakpoints: 5, 6
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


result = factorial(4)
print(result)
