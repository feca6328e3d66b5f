# entry: rank(["pear", "fig", "apple"])
# breakpoints: 4, 6
def rank(words):
    key = lambda w: (len(w), w)
    ordered = sorted(words, key=key)
    lengths = [key(w)[0] for w in ordered]
    return ordered, lengths
