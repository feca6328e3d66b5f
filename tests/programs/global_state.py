# breakpoints: 8, 14
counter = 0
history = []


def bump(k):
    global counter
    counter += k
    history.append(counter)


for k in (1, 2, 3):
    bump(k)
print(counter, history)
