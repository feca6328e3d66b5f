# parity copy of tests/programs/while_loop.py; its entry is called at module level (last lines)
# breakpoints: 7, 11
def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


result = collatz(6)
print(result)
