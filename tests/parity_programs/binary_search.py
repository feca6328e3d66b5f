# parity copy of tests/programs/binary_search.py; its entry is called at module level (last lines)
# breakpoints: 8, 10
def search(xs, target):
    lo, hi = 0, len(xs) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if xs[mid] == target:
            return mid
        if xs[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


result = search([1, 3, 5, 7, 9, 11], 9)
print(result)
