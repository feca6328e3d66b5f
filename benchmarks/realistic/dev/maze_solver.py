"""Breadth-first search through a text maze, returning the shortest path drawn on the grid."""
# entry: solve(["S.#.....", ".##.###.", "....#...", "#.#...#E"])

from collections import deque

MOVES = [(0, 1), (1, 0), (0, -1), (-1, 0)]


def find(grid, symbol):
    for r, row in enumerate(grid):
        c = row.find(symbol)
        if c != -1:
            return r, c
    return None


def neighbours(grid, cell):
    r, c = cell
    for dr, dc in MOVES:
        nr, nc = r + dr, c + dc
        if 0 <= nr < len(grid) and 0 <= nc < len(grid[0]) and grid[nr][nc] != "#":
            yield nr, nc


def bfs(grid, start, goal):
    came_from = {start: None}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell == goal:
            break
        for nxt in neighbours(grid, cell):
            if nxt not in came_from:
                came_from[nxt] = cell
                queue.append(nxt)
    else:
        return None
    path = []
    while cell is not None:
        path.append(cell)
        cell = came_from[cell]
    return path[::-1]


def draw(grid, path):
    rows = [list(row) for row in grid]
    for r, c in path[1:-1]:
        rows[r][c] = "*"
    return ["".join(row) for row in rows]


def solve(grid):
    start, goal = find(grid, "S"), find(grid, "E")
    path = bfs(grid, start, goal)
    if path is None:
        return "no way out"
    picture = draw(grid, path)
    for line in picture:
        print(line)
    return len(path) - 1
