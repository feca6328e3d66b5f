"""An in-memory file tree built from paths: disk usage per directory, largest files and a tree listing."""
# entry: report(["src/app/main.py:1200", "src/app/util.py:800", "src/lib/parse.py:2400", "docs/readme.md:300", "docs/img/logo.png:5000", "setup.cfg:150"], 2)

import heapq


class Node:
    def __init__(self, name, size=0, is_dir=False):
        self.name = name
        self.size = size
        self.is_dir = is_dir
        self.children = {}

    def child_dir(self, name):
        if name not in self.children:
            self.children[name] = Node(name, is_dir=True)
        return self.children[name]


def build_tree(entries):
    root = Node("/", is_dir=True)
    for entry in entries:
        path, size = entry.rsplit(":", 1)
        *dirs, filename = path.split("/")
        node = root
        for part in dirs:
            node = node.child_dir(part)
        node.children[filename] = Node(filename, int(size))
    return root


def total_size(node):
    if not node.is_dir:
        return node.size
    return sum(total_size(child) for child in node.children.values())


def walk_files(node, prefix=""):
    for name in sorted(node.children):
        child = node.children[name]
        path = f"{prefix}/{name}" if prefix else name
        if child.is_dir:
            yield from walk_files(child, path)
        else:
            yield path, child.size


def listing(node, depth=0):
    lines = []
    for name in sorted(node.children):
        child = node.children[name]
        if child.is_dir:
            lines.append("  " * depth + f"{name}/ ({total_size(child)})")
            lines.extend(listing(child, depth + 1))
        else:
            lines.append("  " * depth + f"{name} {child.size}")
    return lines


def report(entries, top):
    root = build_tree(entries)
    for line in listing(root):
        print(line)
    largest = heapq.nlargest(top, walk_files(root), key=lambda pair: pair[1])
    dirs = {name: total_size(child) for name, child in root.children.items() if child.is_dir}
    return {"total": total_size(root), "largest": largest, "top_dirs": dirs}
