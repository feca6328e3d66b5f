# breakpoints: 3, 8
def greet(name, greeting="hello", punct="!"):
    return f"{greeting}, {name}{punct}"


def append_to(x, acc=None):
    if acc is None:
        acc = []
    acc.append(x)
    return acc


print(greet("ann"))
print(greet("bob", punct="?"))
print(append_to(1), append_to(2, [0]))
