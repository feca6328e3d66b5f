total = 0
for i in range(300):
    total += i * i
    if total % 7 == 0:
        total -= 1
print(total)
