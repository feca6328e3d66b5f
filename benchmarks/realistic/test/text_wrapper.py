"""A greedy text wrapper that fills lines to a width and justifies them, built from generators."""
# entry: wrap_paragraph("The quick brown fox jumps over the lazy dog while a very sleepy cat watches from the warm windowsill nearby", 24)


def words(text):
    for raw in text.split(" "):
        if not raw:
            continue
        yield raw


def lines(word_stream, width):
    current = []
    length = 0
    for word in word_stream:
        extra = len(word) + (1 if current else 0)
        if length + extra > width and current:
            yield current
            current, length = [word], len(word)
        else:
            current.append(word)
            length += extra
    if current:
        yield current


def justify(line_words, width):
    if len(line_words) == 1:
        return line_words[0].ljust(width)
    gaps = len(line_words) - 1
    spaces = width - sum(len(w) for w in line_words)
    base, extra = divmod(spaces, gaps)
    out = ""
    for index, word in enumerate(line_words[:-1]):
        out += word + " " * (base + (1 if index < extra else 0))
    return out + line_words[-1]


def wrap_paragraph(text, width):
    rendered = []
    all_lines = list(lines(words(text), width))
    for number, line_words in enumerate(all_lines):
        if number == len(all_lines) - 1:
            rendered.append(" ".join(line_words))
        else:
            rendered.append(justify(line_words, width))
    for row in rendered:
        print(f"|{row:<{width}}|")
    return rendered
