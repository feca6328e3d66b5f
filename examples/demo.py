def longest(words):
    best = ""
    for word in words:
        if len(word) > len(best):
            best = word
    return best


def word_stats(words):
    total = 0
    for word in words:
        total += len(word)
    print("letters:", total)
    return {"longest": longest(words), "mean": total / len(words)}
