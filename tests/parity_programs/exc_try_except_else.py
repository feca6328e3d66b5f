# parity copy of tests/programs/exc_try_except_else.py; its entry is called at module level (last lines)
# breakpoints: 12, 14
def classify(tokens):
    kinds = []
    for tok in tokens:
        try:
            val = int(tok)
        except ValueError:
            kinds.append("word")
            continue
        else:
            kinds.append("neg" if val < 0 else "pos")
        finally:
            kinds.append(";")
    return kinds


result = classify(["3", "x", "-2"])
print(result)
