# parity copy of tests/programs/list_dict_methods.py; its entry is called at module level (last lines)
# breakpoints: 6, 11
def inventory(items):
    counts = {}
    for it in items:
        counts[it] = counts.get(it, 0) + 1
    stack = list(counts)
    last = stack.pop()
    groups = {}
    for name, n in counts.items():
        groups.setdefault(n, []).append(name)
    stack.extend([last, last])
    return counts, groups, stack.index(last)


result = inventory(["apple", "pear", "apple", "fig"])
print(result)
