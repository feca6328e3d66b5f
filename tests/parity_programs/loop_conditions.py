# parity program: breakpoints in a loop, a condition, a hit count and a log point
# breakpoints: 10, 11, 12, 13
# specs: {"10": {"condition": "i % 3 == 1"}, "11": {"logMessage": "i is {i}"}, "12": {"hitCondition": "2"}}
# script: continue continue next continue continue stepIn continue continue continue continue
def body(i):
    return i * i


total = 0
for i in range(7):
    total += body(i)
    if total > 10:
        total -= 1
print(total)
