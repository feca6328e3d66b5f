# breakpoints: 3, 8
def adder(k):
    return lambda x: x + k


adders = [adder(i) for i in range(3)]
late = [lambda x: x + i for i in range(3)]
print([f(10) for f in adders])
print([f(10) for f in late])
