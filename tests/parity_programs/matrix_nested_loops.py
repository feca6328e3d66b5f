# parity copy of tests/programs/matrix_nested_loops.py; its entry is called at module level (last lines)
# breakpoints: 9
def transpose(m):
    rows, cols = len(m), len(m[0])
    out = []
    for j in range(cols):
        row = []
        for i in range(rows):
            row.append(m[i][j])
        out.append(row)
    return out


result = transpose([[1, 2, 3], [4, 5, 6]])
print(result)
