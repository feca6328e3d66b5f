# parity copy of tests/programs/closures.py; its entry is called at module level (last lines)
# breakpoints: 8, 17
def make_counter(step):
    count = 0

    def bump():
        nonlocal count
        count += step
        return count

    return bump


def use_counter(k):
    bump = make_counter(2)
    vals = [bump() for _ in range(k)]
    return vals


result = use_counter(3)
print(result)
