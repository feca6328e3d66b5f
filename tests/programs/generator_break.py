# breakpoints: 7, 9
def evens():
    n = 0
    try:
        while True:
            yield n
            n += 2
    finally:
        print("closed at", n)


for e in evens():
    if e >= 4:
        break
    print(e)
print("done")
