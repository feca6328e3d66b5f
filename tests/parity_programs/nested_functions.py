# parity copy of tests/programs/nested_functions.py; its entry is called at module level (last lines)
# breakpoints: 8, 14
import math


def area_table(radii):
    def area(r):
        return round(math.pi * r * r, 2)

    def fmt(r):
        return f"{r}:{area(r)}"

    rows = [fmt(r) for r in radii]
    return ", ".join(rows)


result = area_table([1, 2, 3])
print(result)
