# breakpoints: 4, 15
def traced(fn):
    def wrapper(*args):
        result = fn(*args)
        calls.append((fn.__name__, args, result))
        return result
    return wrapper


calls = []


@traced
def add(a, b):
    return a + b


print(add(1, 2), add(3, 4), calls)
