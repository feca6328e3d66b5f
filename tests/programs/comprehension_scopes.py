# breakpoints: 3, 10, 15
def grid(rows, cols=[c * 2 for c in range(2)]):
    return [[r + c for c in cols] for r in range(rows)]


class Table:
    widths = {name: len(name) for name in ["id", "label"]}

    def cells(self, rows):
        return [cell for row in [list(r) for r in rows] for cell in row]


squares = [n * n for n in range(3)]
pairs = {(a, b) for a in range(2) for b in [a + k for k in range(2)]}
nested = [x for x in [y * 3 for y in squares]]
scale = lambda xs: [x * 10 for x in xs]
print(grid(2), Table.widths, Table().cells(["ab", "c"]), pairs, nested, scale([1, 2]))
