# breakpoints: 3, 7
def label(n):
    return "even" if n % 2 == 0 else "odd"


words = {n: label(n) for n in range(4)}
mods = {n % 3 for n in range(7)}
nested = [[i * j for j in range(3)] for i in range(2)]
print(words, mods, nested)
