"""A one-line text buffer whose edits, undo and redo are closures over a bounded history."""
# entry: edit_session("the cat sat", [["insert", 4, "black "], ["replace", "cat", "dog"], ["delete", 0, 4], ["undo"], ["undo"], ["redo"], ["insert", 0, "A "], ["replace", "sat", "ran"], ["capitalize"], ["undo"], ["undo"], ["undo"], ["undo"], ["undo"], ["redo"]])

from collections import deque

HISTORY = 3


def make_buffer(text):
    current = text
    undo_stack = deque(maxlen=HISTORY)
    redo_stack = []
    edits = 0

    def apply(edit):
        nonlocal current, edits
        undo_stack.append(current)
        redo_stack.clear()
        current = edit(current)
        edits += 1

    def step(source, target):
        nonlocal current
        if not source:
            return False
        target.append(current)
        current = source.pop()
        return True

    def undo():
        return step(undo_stack, redo_stack)

    def redo():
        return step(redo_stack, undo_stack)

    def state():
        return {"text": current, "edits": edits, "can_undo": len(undo_stack), "can_redo": len(redo_stack)}

    return apply, undo, redo, state


def insert(position, words):
    return lambda text: text[:position] + words + text[position:]


def delete(start, end):
    return lambda text: text[:start] + text[end:]


def replace(old, new):
    def edit(text):
        return text.replace(old, new, 1)

    return edit


def capitalize():
    return lambda text: " ".join(word[:1].upper() + word[1:] for word in text.split(" "))


EDITS = {"insert": insert, "delete": delete, "replace": replace, "capitalize": capitalize}


def edit_session(text, commands):
    apply, undo, redo, state = make_buffer(text)
    refused = 0
    for name, *args in commands:
        if name == "undo":
            done = undo()
        elif name == "redo":
            done = redo()
        else:
            apply(EDITS[name](*args))
            done = True
        refused += not done
        print(f"{name:>10}: {state()['text']!r}{'' if done else ' (nothing to ' + name + ')'}")
    return {**state(), "refused": refused}
