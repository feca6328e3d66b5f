# entry: palindromes(["level", "abc", "noon"])
# breakpoints: 9, 16
def clean(s):
    return "".join(ch for ch in s.lower() if ch.isalpha())


def is_pal(s):
    t = clean(s)
    return t == t[::-1]


def palindromes(words):
    found = []
    for w in words:
        if is_pal(w):
            found.append(w)
    return found
