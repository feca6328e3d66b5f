# parity program: `next` over the end of a generator that runs out normally (no exception)
# breakpoints: 7
# script: continue next next next
def countdown(n):
    while n > 0:
        yield n
        n -= 1


acc = []
for v in countdown(2):
    acc.append(v * 10)
print(acc)
