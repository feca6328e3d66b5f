# parity copy of tests/programs/exc_same_function.py; its entry is called at module level (last lines)
# breakpoints: 7, 9
def safe_div(a, b):
    try:
        q = a / b
    except ZeroDivisionError as e:
        q = None
        msg = str(e)
    return q


result = safe_div(6, 0)
print(result)
