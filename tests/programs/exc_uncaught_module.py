# breakpoints: 4, 10
def check(x):
    if x > 2:
        raise ValueError(f"too big: {x}")
    return x


vals = []
for i in range(5):
    vals.append(check(i))
print("unreachable")
