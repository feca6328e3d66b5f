# breakpoints: 4, 15, 19
def scale(v, k):
    return [
        x * k
        for x in v
    ]


data = [
    1,
    2,
    3,
]
result = scale(
    data,
    3,
)
total = (result[0]
         + result[1]
         + result[2])
print(result, total)
