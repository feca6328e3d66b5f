# breakpoints: 4, 11
def shout(word):
    text = word.upper() + "!"
    print(text)
    return len(text)


n = 0
for w in ["hi", "yo"]:
    print("word", w)
    n += shout(w)
print("total", n)
