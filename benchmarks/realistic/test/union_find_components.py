"""Union-find with path compression that groups network hosts into connected components."""
# entry: count_components(["web1", "web2", "db1", "db2", "cache", "lb"], [("web1", "lb"), ("web2", "lb"), ("db1", "db2"), ("web1", "web2")])


class DisjointSet:
    def __init__(self, items):
        self.parent = {item: item for item in items}
        self.size = {item: 1 for item in items}

    def find(self, item):
        root = self.parent[item]
        if root != item:
            root = self.find(root)
            self.parent[item] = root
        return root

    def union(self, a, b):
        root_a, root_b = self.find(a), self.find(b)
        if root_a == root_b:
            return False
        if self.size[root_a] < self.size[root_b]:
            root_a, root_b = root_b, root_a
        self.parent[root_b] = root_a
        self.size[root_a] += self.size[root_b]
        return True

    def __repr__(self):
        return f"DisjointSet({len(self.parent)} items)"


def count_components(hosts, links):
    groups = DisjointSet(hosts)
    redundant = []
    for a, b in links:
        if not groups.union(a, b):
            redundant.append((a, b))
    components = {}
    for host in hosts:
        components.setdefault(groups.find(host), []).append(host)
    result = sorted(sorted(members) for members in components.values())
    return {"components": result, "redundant": redundant}
