# breakpoints: 9, 15
def ticker():
    t = 0
    try:
        while True:
            yield t
            t += 1
    finally:
        print("ticker closed at", t)


g = ticker()
first = next(g)
second = next(g)
del g
print(first, second)
