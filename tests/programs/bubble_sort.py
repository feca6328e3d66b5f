# breakpoints: 8, 12
def bubble(xs):
    xs = list(xs)
    for i in range(len(xs)):
        swapped = False
        for j in range(len(xs) - 1 - i):
            if xs[j] > xs[j + 1]:
                xs[j], xs[j + 1] = xs[j + 1], xs[j]
                swapped = True
        if not swapped:
            break
    return xs


print(bubble([3, 1, 2]))
