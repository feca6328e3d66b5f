"""Converts between integers and Roman numerals, accepting a numeral only if it reads back in its canonical form."""
# entry: convert_all([1994, "MCMXCIV", "XLII", 3999, "IIII", "MMXXV", 0, "VX", "CDXLIV", "12"])

NUMERALS = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
    (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]
VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number):
    if not 0 < number < 4000:
        return None
    parts = []
    index = 0
    while number:
        value, letters = NUMERALS[index]
        if value > number:
            index += 1
            continue
        parts.append(letters)
        number -= value
    return "".join(parts)


def from_roman(text):
    total = 0
    position = 0
    while position < len(text):
        value = VALUES.get(text[position])
        if value is None:
            break
        following = VALUES.get(text[position + 1], 0) if position + 1 < len(text) else 0
        if following > value:
            total += following - value
            position += 2
        else:
            total += value
            position += 1
    else:
        return total if to_roman(total) == text else None
    return None


def convert_all(items):
    lines = []
    for item in items:
        if isinstance(item, int):
            result = to_roman(item)
            lines.append(f"{item} = {result}" if result else f"{item}: out of range")
        else:
            result = from_roman(item)
            lines.append(f"{item} = {result}" if result is not None else f"{item}: not a canonical numeral")
    print("\n".join(lines))
    return lines
