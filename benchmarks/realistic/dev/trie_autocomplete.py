"""Prefix-tree autocomplete: insert a vocabulary with frequencies and suggest the top completions."""
# entry: suggest_all(["car", "card", "care", "cart", "cat", "dog", "door", "dot"], [5, 2, 7, 1, 9, 4, 3, 1], ["ca", "car", "do", "x"], 2)


class TrieNode:
    def __init__(self):
        self.children = {}
        self.count = 0


class Trie:
    def __init__(self):
        self.root = TrieNode()
        self.size = 0

    def insert(self, word, count):
        node = self.root
        for ch in word:
            node = node.children.setdefault(ch, TrieNode())
        if node.count == 0:
            self.size += 1
        node.count += count

    def find(self, prefix):
        node = self.root
        for ch in prefix:
            if ch not in node.children:
                return None
            node = node.children[ch]
        return node

    def words_under(self, node, prefix):
        if node.count:
            yield prefix, node.count
        for ch in sorted(node.children):
            yield from self.words_under(node.children[ch], prefix + ch)

    def complete(self, prefix, limit):
        node = self.find(prefix)
        if node is None:
            return []
        found = list(self.words_under(node, prefix))
        found.sort(key=lambda pair: (-pair[1], pair[0]))
        return [word for word, _ in found[:limit]]


def suggest_all(words, counts, prefixes, limit):
    trie = Trie()
    for word, count in zip(words, counts, strict=True):
        trie.insert(word, count)
    suggestions = {prefix: trie.complete(prefix, limit) for prefix in prefixes}
    print(f"{trie.size} words indexed")
    return suggestions
