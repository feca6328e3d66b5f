"""Small dense matrix routines: multiplication, determinant by elimination, and rotation of 2-D points."""
# entry: analyse([[2, 1, 0], [1, 3, 1], [0, 1, 4]], [[1, 0], [0, 1], [2, 2]], 90)

import math


class Matrix:
    def __init__(self, rows):
        self.rows = [list(map(float, row)) for row in rows]
        self.n = len(rows)
        self.m = len(rows[0])

    def __matmul__(self, other):
        if self.m != other.n:
            raise ValueError("shape mismatch")
        result = []
        for i in range(self.n):
            row = []
            for j in range(other.m):
                row.append(sum(self.rows[i][k] * other.rows[k][j] for k in range(self.m)))
            result.append(row)
        return Matrix(result)

    def transpose(self):
        return Matrix([list(column) for column in zip(*self.rows, strict=True)])

    def determinant(self):
        a = [row[:] for row in self.rows]
        det = 1.0
        for col in range(self.n):
            pivot = max(range(col, self.n), key=lambda r: abs(a[r][col]))
            if math.isclose(a[pivot][col], 0.0):
                return 0.0
            if pivot != col:
                a[col], a[pivot] = a[pivot], a[col]
                det = -det
            det *= a[col][col]
            for r in range(col + 1, self.n):
                factor = a[r][col] / a[col][col]
                for c in range(col, self.n):
                    a[r][c] -= factor * a[col][c]
        return det

    def rounded(self, digits=3):
        return [[round(x, digits) for x in row] for row in self.rows]


def rotation(degrees):
    theta = math.radians(degrees)
    c, s = math.cos(theta), math.sin(theta)
    return Matrix([[c, -s], [s, c]])


def analyse(square, points, degrees):
    a = Matrix(square)
    det = a.determinant()
    product = a @ a.transpose()
    rotated = (Matrix(points) @ rotation(degrees).transpose()).rounded()
    norms = [round(math.hypot(x, y), 3) for x, y in rotated]
    print(f"det={det:.2f}")
    return {"det": round(det, 6), "a_at": product.rounded(), "rotated": rotated, "norms": norms}
