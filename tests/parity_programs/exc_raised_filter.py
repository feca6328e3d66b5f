# parity program: the `raised` exception filter stops at each raise, caught or not
# breakpoints: 17
# script: stepIn next next continue next stepOut continue continue
def check(n):
    if n < 0:
        raise ValueError(f"negative: {n}")
    return n


def safe(n):
    try:
        return check(n)
    except ValueError:
        return 0


results = [safe(3), safe(-1)]
try:
    check(-2)
except ValueError as exc:
    message = str(exc)
print(results)
