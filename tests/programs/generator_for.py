# breakpoints: 4, 10
def countdown(n):
    while n > 0:
        yield n
        n -= 1


acc = []
for v in countdown(3):
    acc.append(v * 10)
print(acc)
