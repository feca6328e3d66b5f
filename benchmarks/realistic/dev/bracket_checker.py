"""Checks that brackets in code snippets balance, reporting the position of the first error."""
# entry: check_all(["f(a[1], {b: 2})", "(]", "((x)", "print('(')", "{[()()]}x)"])

PAIRS = {")": "(", "]": "[", "}": "{"}


def first_error(text):
    stack = []
    in_string = None
    i = 0
    while i < len(text):
        ch = text[i]
        i += 1
        if in_string:
            if ch == in_string:
                in_string = None
            continue
        if ch in "'\"":
            in_string = ch
        elif ch in "([{":
            stack.append((ch, i - 1))
        elif ch in PAIRS:
            if not stack or stack[-1][0] != PAIRS[ch]:
                return i - 1, f"unexpected {ch}"
            stack.pop()
    if stack:
        opener, position = stack[-1]
        return position, f"unclosed {opener}"
    return None


def check_all(snippets):
    report = {}
    for snippet in snippets:
        error = first_error(snippet)
        report[snippet] = "ok" if error is None else f"{error[1]} at {error[0]}"
    return report
