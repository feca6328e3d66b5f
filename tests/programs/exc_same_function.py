# entry: safe_div(6, 0)
# breakpoints: 7, 9
def safe_div(a, b):
    try:
        q = a / b
    except ZeroDivisionError as e:
        q = None
        msg = str(e)
    return q
