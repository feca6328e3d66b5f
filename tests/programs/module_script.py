# breakpoints: 6, 10
a = 3
b = 4
c = (a ** 2 + b ** 2) ** 0.5
items = [a, b, c]
items.reverse()
label = "hyp" if c > a else "leg"
count = 0
while count < 3:
    count += 1
print(label, items, count)
