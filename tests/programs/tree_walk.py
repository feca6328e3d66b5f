# breakpoints: 11, 17, 22
class Node:
    def __init__(self, value, children=()):
        self.value = value
        self.children = list(children)


def total(node):
    s = node.value
    for child in node.children:
        s += total(child)
    return s


def depth(node):
    if not node.children:
        return 1
    return 1 + max(depth(c) for c in node.children)


tree = Node(1, [Node(2, [Node(4)]), Node(3)])
print(total(tree), depth(tree))
