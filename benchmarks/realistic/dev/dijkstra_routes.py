"""Shortest delivery routes between depots by Dijkstra's algorithm over a weighted road graph."""
# entry: plan_routes([["A", "B", 4], ["A", "C", 2], ["C", "B", 1], ["B", "D", 5], ["C", "D", 8], ["D", "E", 3], ["F", "E", 1]], "A", ["D", "E", "F"])

import heapq
import math
from collections import namedtuple

Route = namedtuple("Route", ["target", "distance", "path"])


def build_graph(edges):
    graph = {}
    for a, b, weight in edges:
        graph.setdefault(a, []).append((b, weight))
        graph.setdefault(b, []).append((a, weight))
    return graph


def dijkstra(graph, source):
    dist = {node: math.inf for node in graph}
    previous = {}
    dist[source] = 0
    queue = [(0, source)]
    while queue:
        d, node = heapq.heappop(queue)
        if d > dist[node]:
            continue
        for neighbour, weight in graph[node]:
            candidate = d + weight
            if candidate < dist[neighbour]:
                dist[neighbour] = candidate
                previous[neighbour] = node
                heapq.heappush(queue, (candidate, neighbour))
    return dist, previous


def unwind(previous, source, target):
    path = [target]
    while path[-1] != source:
        if path[-1] not in previous:
            return None
        path.append(previous[path[-1]])
    return list(reversed(path))


def plan_routes(edges, source, targets):
    graph = build_graph(edges)
    dist, previous = dijkstra(graph, source)
    routes = []
    for target in targets:
        path = unwind(previous, source, target)
        routes.append(Route(target, dist[target], path))
        print(f"{source}->{target}: {dist[target]} via {'-'.join(path)}")
    return routes
