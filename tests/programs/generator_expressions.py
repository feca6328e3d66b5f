# breakpoints: 3, 7
def square(x):
    return x * x


nums = [1, 2, 3, 4]
total = sum(square(x) for x in nums if x % 2 == 0)
has_big = any(x > 2 for x in nums)
print(total, has_big)
