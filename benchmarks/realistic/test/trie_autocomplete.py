"""A trie of search terms with frequencies that autocompletes prefixes, ranked by popularity."""
# entry: autocomplete(["car", "card", "care", "cart", "cat", "dog", "card", "care", "card"], ["car", "ca", "do", "x"], 3)


class TrieNode:
    def __init__(self):
        self.children = {}
        self.count = 0

    def __repr__(self):
        return f"TrieNode(count={self.count}, children={sorted(self.children)})"


class Trie:
    def __init__(self):
        self.root = TrieNode()
        self.size = 0

    def insert(self, word):
        node = self.root
        for char in word:
            node = node.children.setdefault(char, TrieNode())
        if node.count == 0:
            self.size += 1
        node.count += 1

    def _find(self, prefix):
        node = self.root
        for char in prefix:
            node = node.children.get(char)
            if node is None:
                return None
        return node

    def remove(self, word):
        """Forget one use of word; prune branches that no longer lead to any word; return how many nodes went."""
        pruned = 0

        def walk(node, depth):
            nonlocal pruned
            if depth == len(word):
                if node.count == 0:
                    return False
                node.count -= 1
                if node.count == 0:
                    self.size -= 1
                return node.count == 0 and not node.children
            child = node.children.get(word[depth])
            if child is None:
                return False
            if walk(child, depth + 1):
                del node.children[word[depth]]
                pruned += 1
            return node.count == 0 and not node.children

        walk(self.root, 0)
        return pruned

    def _collect(self, node, prefix):
        if node.count:
            yield prefix, node.count
        for char in sorted(node.children):
            yield from self._collect(node.children[char], prefix + char)

    def complete(self, prefix, limit):
        start = self._find(prefix)
        if start is None:
            return []
        matches = list(self._collect(start, prefix))
        matches.sort(key=lambda pair: (-pair[1], pair[0]))
        return [word for word, _ in matches[:limit]]


def autocomplete(history, prefixes, limit, forgotten=("cat", "cart")):
    trie = Trie()
    for term in history:
        trie.insert(term)
    pruned = sum(trie.remove(term) for term in forgotten)
    print(f"forgot {len(forgotten)} terms, pruned {pruned} nodes")
    suggestions = {}
    for prefix in prefixes:
        suggestions[prefix] = trie.complete(prefix, limit)
        print(f"{prefix!r:>6} -> {', '.join(suggestions[prefix]) or '(none)'}")
    return trie.size, suggestions
