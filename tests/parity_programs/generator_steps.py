# parity program: stepping into, through and out of a generator's yields
# breakpoints: 10
# script: stepIn stepIn next stepOut stepIn next next stepIn stepOut next
def squares(n):
    for i in range(n):
        yield i * i


total = 0
for sq in squares(3):
    total += sq
print(total)
