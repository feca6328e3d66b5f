"""Greedy word wrapping and full justification of a paragraph to a fixed width."""
# entry: format_paragraph("Debugging is twice as hard as writing the code in the first place so if you write the code as cleverly as possible you are not smart enough to debug it", 28)


def wrap(words, width):
    lines = []
    i = 0
    while i < len(words):
        line = [words[i]]
        length = len(words[i])
        i += 1
        while i < len(words):
            if length + 1 + len(words[i]) > width:
                break
            length += 1 + len(words[i])
            line.append(words[i])
            i += 1
        lines.append(line)
    return lines


def justify(line, width):
    if len(line) == 1:
        return line[0].ljust(width)
    gaps = len(line) - 1
    spaces = width - sum(len(w) for w in line)
    base, extra = divmod(spaces, gaps)
    out = ""
    for index, word in enumerate(line[:-1]):
        out += word + " " * (base + (1 if index < extra else 0))
    return out + line[-1]


def hyphen_candidates(words, width):
    long_words = []
    for word in words:
        if len(word) <= width // 3:
            continue
        long_words.append(word)
    return long_words


def format_paragraph(text, width):
    words = text.split()
    lines = wrap(words, width)
    result = [justify(line, width) for line in lines[:-1]]
    result.append(" ".join(lines[-1]))
    for line in result:
        print(f"|{line:<{width}}|")
    return {"lines": len(result), "long_words": hyphen_candidates(words, width)}
