# breakpoints: 3, 6
people = [("ann", 31), ("bob", 25), ("cy", 40)]
by_age = sorted(people, key=lambda p: p[1])
names = list(map(lambda p: p[0].title(), by_age))
adults = list(filter(lambda p: p[1] > 30, people))
print(names, adults)
