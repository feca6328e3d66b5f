# breakpoints: 10, 16
def letters(s):
    for ch in s:
        yield ch


def numbers():
    n = 1
    while True:
        yield n
        n += 1


pairs = []
for ch, n in zip(letters("abc"), numbers()):
    pairs.append(ch * n)
print(pairs)
