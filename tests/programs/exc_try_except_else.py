# entry: classify(["3", "x", "-2"])
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
