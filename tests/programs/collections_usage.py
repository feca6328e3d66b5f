# breakpoints: 5, 12
from collections import Counter, defaultdict, deque

letters = Counter("abracadabra")
common = letters.most_common(2)
graph = defaultdict(list)
for a, b in [(1, 2), (1, 3), (2, 4)]:
    graph[a].append(b)
queue = deque([1])
order = []
while queue:
    node = queue.popleft()
    order.append(node)
    queue.extend(graph[node])
print(common, order)
