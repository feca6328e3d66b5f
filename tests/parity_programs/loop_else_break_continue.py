# parity copy of tests/programs/loop_else_break_continue.py; its entry is called at module level (last lines)
# breakpoints: 9
def find_prime(xs):
    for x in xs:
        for d in range(2, x):
            if x % d == 0:
                break
        else:
            return x
        if x > 100:
            continue
    i = 0
    while i < 2:
        i += 1
    else:
        return -1


result = find_prime([4, 6, 7, 9])
print(result)
