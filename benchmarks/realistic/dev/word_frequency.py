"""Word frequency report for a short text: the most common words, ignoring stop words."""
# entry: top_words("The cat sat on the mat. The dog sat on the log! A cat, a dog; the end. Then the cat ran off and the dog slept.", 3)

import re
from collections import Counter

STOP_WORDS = {"the", "a", "on", "of", "and"}


def tokenize(text):
    return re.findall(r"[a-z']+", text.lower())


def content_words(words):
    return [w for w in words if w not in STOP_WORDS and len(w) > 1]


def longest_sentence(sentences):
    best = ""
    for sentence in sentences:
        if len(tokenize(sentence)) > len(tokenize(best)):
            best = sentence
    return best


def top_words(text, n):
    words = tokenize(text)
    counts = Counter(content_words(words))
    sentences = [s for s in re.split(r"[.!?;]\s*", text) if s]
    ranked = counts.most_common(n)
    for word, count in ranked:
        share = count / len(words)
        print(f"{word:<6} {count} ({share:.0%})")
    return {
        "words": len(words),
        "sentences": len(sentences),
        "distinct": len(counts),
        "top": ranked,
        "longest": longest_sentence(sentences),
    }
