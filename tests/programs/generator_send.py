# entry: run_avg([10, 20, 60])
# breakpoints: 9, 19
def averager():
    total = 0
    count = 0
    avg = None
    while True:
        value = yield avg
        total += value
        count += 1
        avg = total / count


def run_avg(values):
    coro = averager()
    next(coro)
    out = []
    for v in values:
        out.append(coro.send(v))
    coro.close()
    return out
