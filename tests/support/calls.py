"""A program with calls, a loop and printing that the debugger tests step through: `square` (lines 1-3),
`total` (lines 6-10, its loop on lines 8-9), then module code that calls `total` and prints. CALLS holds a
dict besides (line 14); CALLS_PLAIN does not, so there `answer = total(data)` is line 14."""

CALLS_PLAIN = """\
def square(n):
    result = n * n
    return result


def total(values):
    acc = 0
    for v in values:
        acc += square(v)
    return acc


data = [1, 2, 3]
answer = total(data)
print("answer", answer)
"""

CALLS = CALLS_PLAIN.replace("answer = total", 'info = {"name": "demo", "sizes": (1, 2)}\nanswer = total', 1)
