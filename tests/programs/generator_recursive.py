# entry: flatten([1, [2, [3, 4]], 5])
# breakpoints: 6, 8
def walk(node):
    if isinstance(node, list):
        for child in node:
            yield from walk(child)
    else:
        yield node


def flatten(tree):
    return [x for x in walk(tree)]
