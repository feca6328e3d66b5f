# parity copy of tests/programs/recursion_fib.py; its entry is called at module level (last lines)
# breakpoints: 5, 8
def fib(n):
    if n < 2:
        return n
    a = fib(n - 1)
    b = fib(n - 2)
    return a + b


result = fib(4)
print(result)
