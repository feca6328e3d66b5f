"""Conway's Game of Life on a small bounded grid, run until it repeats or a generation cap is reached."""
# entry: run_life([".....", "..#..", "..#..", "..#..", "....."], 5)
# kind: simulation
from itertools import product

ALIVE = "#"
DEAD = "."
OFFSETS = [(dr, dc) for dr, dc in product((-1, 0, 1), repeat=2) if (dr, dc) != (0, 0)]


def parse(rows):
    cells = set()
    for r, row in enumerate(rows):
        for c, char in enumerate(row):
            if char == ALIVE:
                cells.add((r, c))
    return cells, len(rows), len(rows[0])


def neighbours(cell, height, width):
    r, c = cell
    for dr, dc in OFFSETS:
        nr, nc = r + dr, c + dc
        if 0 <= nr < height and 0 <= nc < width:
            yield nr, nc


def step(cells, height, width):
    counts = {}
    for cell in cells:
        for other in neighbours(cell, height, width):
            counts[other] = counts.get(other, 0) + 1
    born = {cell for cell, n in counts.items() if n == 3 and cell not in cells}
    survive = {cell for cell in cells if counts.get(cell, 0) in (2, 3)}
    return born | survive


def render(cells, height, width):
    return ["".join(ALIVE if (r, c) in cells else DEAD for c in range(width)) for r in range(height)]


def bounding_box(cells):
    if not cells:
        return None
    rows = [r for r, _ in cells]
    cols = [c for _, c in cells]
    return (min(rows), min(cols)), (max(rows), max(cols))


def describe(cells, generation):
    box = bounding_box(cells)
    if box is None:
        return f"gen {generation}: extinct"
    (top, left), (bottom, right) = box
    shape = f"{bottom - top + 1}x{right - left + 1}"
    return f"gen {generation}: {len(cells)} alive in a {shape} box at row {top}, col {left}"


def run_life(rows, max_generations):
    cells, height, width = parse(rows)
    seen = {frozenset(cells): 0}
    generation = 0
    while generation < max_generations:
        generation += 1
        cells = step(cells, height, width)
        print(describe(cells, generation))
        key = frozenset(cells)
        if key in seen:
            print(f"generation {generation} repeats generation {seen[key]}")
            break
        seen[key] = generation
    else:
        print(f"no repeat within {max_generations} generations")
    return generation, len(cells), render(cells, height, width)
