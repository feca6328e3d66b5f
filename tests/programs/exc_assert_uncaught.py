# breakpoints: 3, 8
def mean(xs):
    assert xs, "empty input"
    return sum(xs) / len(xs)


print(mean([2, 4]))
print(mean([]))
