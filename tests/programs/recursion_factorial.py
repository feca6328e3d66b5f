# entry: factorial(4)
# breakpoints: 5, 6
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)
