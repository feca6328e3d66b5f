"""Converts a small subset of Markdown (headings, lists, emphasis, links, paragraphs) to HTML."""
# entry: render("# Shopping\n\nBuy *fresh* fruit and **bread**.\n\n- apples\n- [pears](http://p.example)\n- plums\n\n## Notes\nPay with `card`.\nKeep the receipt.")
# kind: parser

import re

INLINE_RULES = [
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
    (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"\*(.+?)\*"), r"<em>\1</em>"),
    (re.compile(r"\[([^\]]+)\]\(([^)]+)\)"), r'<a href="\2">\1</a>'),
]


def inline(text):
    for pattern, replacement in INLINE_RULES:
        text = pattern.sub(replacement, text)
    return text


def classify(line):
    if not line.strip():
        return "blank", ""
    heading = re.match(r"(#{1,6})\s+(.*)", line)
    if heading:
        return f"h{len(heading.group(1))}", heading.group(2)
    if line.startswith("- "):
        return "item", line[2:]
    return "text", line


def blocks(lines):
    current_kind, current = None, []
    for line in lines:
        kind, text = classify(line)
        if kind in ("item", "text") and kind == current_kind:
            current.append(text)
            continue
        if current_kind is not None:
            yield current_kind, current
        if kind == "blank":
            current_kind, current = None, []
        else:
            current_kind, current = kind, [text]
    if current_kind is not None:
        yield current_kind, current


def render_block(kind, texts):
    if kind == "item":
        items = "".join(f"<li>{inline(t)}</li>" for t in texts)
        return f"<ul>{items}</ul>"
    if kind == "text":
        return f"<p>{inline(' '.join(texts))}</p>"
    return f"<{kind}>{inline(texts[0])}</{kind}>"


def render(markdown):
    html = [render_block(kind, texts) for kind, texts in blocks(markdown.split("\n"))]
    for line in html:
        print(line)
    return "\n".join(html)
