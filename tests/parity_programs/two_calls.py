# parity program: stepIn at a line with two calls, stepOut to the call line, a return through two frames
# breakpoints: 13
# script: stepIn next next stepIn stepOut stepIn stepIn stepIn next next next stepOut next next
def f(a):
    b = a * 2
    return b + 1


def g(a):
    return f(a) + f(a + 1)


x = f(1) + f(2)
y = g(x)
z = [f(i) for i in range(2)]
print(x, y, z)
