# entry: sum(squares(3))
# breakpoints: 6
def squares(n):
    i = 0
    while i < n:
        yield i * i
        i += 1
