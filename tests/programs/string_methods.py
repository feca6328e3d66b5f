# breakpoints: 3, 8
text = "  The quick brown fox  "
words = text.strip().split()
caps = [w.capitalize() for w in words]
joined = "-".join(caps)
swapped = joined.replace("-", " ").lower()
counts = {w: len(w) for w in words}
first = joined.find("Brown")
print(joined, swapped, counts, first, text.count("o"))
