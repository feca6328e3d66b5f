# breakpoints: 4, 9
def finish(code):
    print("finishing")
    raise SystemExit(code)


total = sum(range(4))
if total > 3:
    finish(0)
print("never printed")
