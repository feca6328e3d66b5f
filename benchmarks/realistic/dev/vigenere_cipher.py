"""A Vigenère cipher over letters: key streams from itertools.cycle, shifting generators, and five-letter cipher groups."""
# entry: exchange([["Attack at dawn!", "lemon"], ["Meet me by the old mill, 9pm.", "key"], ["Hello", "b4d"]])

import re
from itertools import cycle

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
KEY_RE = re.compile(r"[A-Za-z]+")
GROUP = 5


class BadKey(ValueError):
    pass


def key_shifts(key):
    if not KEY_RE.fullmatch(key):
        raise BadKey(f"key {key!r} must be letters only")
    for letter in cycle(key.upper()):
        yield ALPHABET.index(letter)


def shifted(text, shifts, direction):
    """Shift each letter of text by the next key shift; other characters pass through unshifted."""
    for char in text:
        if not char.isalpha():
            yield char
            continue
        base = ord("A") if char.isupper() else ord("a")
        yield chr(base + (ord(char) - base + direction * next(shifts)) % 26)


def encrypt(text, key):
    return "".join(shifted(text, key_shifts(key), 1))


def decrypt(text, key):
    return "".join(shifted(text, key_shifts(key), -1))


def cipher_groups(text):
    letters = re.sub(r"[^A-Z]", "", text.upper())
    return " ".join(letters[i : i + GROUP] for i in range(0, len(letters), GROUP))


def exchange(messages):
    results = []
    for plain, key in messages:
        try:
            secret = encrypt(plain, key)
        except BadKey as exc:
            print(f"skipped: {exc}")
            continue
        back = decrypt(secret, key)
        results.append({"sent": cipher_groups(secret), "ok": back == plain})
        print(f"{plain!r} -> {secret!r}")
    return results
