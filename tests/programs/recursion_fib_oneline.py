# breakpoints: 3, 8
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


total = 0
for k in range(4):
    total += fib(k)
print(total)
