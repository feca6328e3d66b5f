# parity copy of tests/programs/early_return.py; its entry is called at module level (last lines)
# breakpoints: 8
def index_of(xs, target):
    if not xs:
        return -1
    for i, x in enumerate(xs):
        if x == target:
            return i
    return -1


result = index_of([5, 8, 2, 8], 8)
print(result)
