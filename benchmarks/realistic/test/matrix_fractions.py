"""Exact matrix arithmetic with fractions: determinants two ways, inverse, rank and solving a linear system."""
# entry: solve_system([[2, 1, -1], [-3, -1, 2], [-2, 1, 2]], [8, -11, -3])
from fractions import Fraction
import math


class SingularMatrixError(ArithmeticError):
    pass


class Matrix:
    def __init__(self, rows):
        width = len(rows[0])
        if any(len(row) != width for row in rows):
            raise ValueError("ragged rows")
        self.rows = [[Fraction(value) for value in row] for row in rows]

    @property
    def shape(self):
        return len(self.rows), len(self.rows[0])

    @classmethod
    def identity(cls, size):
        return cls([[1 if i == j else 0 for j in range(size)] for i in range(size)])

    def __repr__(self):
        cells = [[str(value) for value in row] for row in self.rows]
        width = max(len(cell) for row in cells for cell in row)
        return "\n".join("[ " + " ".join(cell.rjust(width) for cell in row) + " ]" for row in cells)

    def __eq__(self, other):
        return isinstance(other, Matrix) and self.rows == other.rows

    def __matmul__(self, other):
        n, m = self.shape
        m2, p = other.shape
        if m != m2:
            raise ValueError(f"cannot multiply {n}x{m} by {m2}x{p}")
        columns = list(zip(*other.rows))
        return Matrix([[sum(a * b for a, b in zip(row, col)) for col in columns] for row in self.rows])

    def minor(self, skip_row, skip_col):
        return Matrix([
            [value for j, value in enumerate(row) if j != skip_col]
            for i, row in enumerate(self.rows) if i != skip_row
        ])

    def det_laplace(self):
        """Cofactor expansion along the first row (recursive, fine for small matrices)."""
        n, m = self.shape
        if n != m:
            raise ValueError("determinant needs a square matrix")
        if n == 1:
            return self.rows[0][0]
        if n == 2:
            (a, b), (c, d) = self.rows
            return a * d - b * c
        total = Fraction(0)
        for col, value in enumerate(self.rows[0]):
            if value == 0:
                continue
            sign = -1 if col % 2 else 1
            total += sign * value * self.minor(0, col).det_laplace()
        return total


def eliminate(rows, augment=None):
    """Gauss-Jordan elimination in place; returns (rank, determinant sign and scale product)."""
    n_rows, n_cols = len(rows), len(rows[0])
    det = Fraction(1)
    pivot_row = 0
    for col in range(n_cols):
        pivot = None
        for r in range(pivot_row, n_rows):
            if rows[r][col] != 0:
                pivot = r
                break
        if pivot is None:
            det = Fraction(0)
            continue
        if pivot != pivot_row:
            rows[pivot], rows[pivot_row] = rows[pivot_row], rows[pivot]
            if augment is not None:
                augment[pivot], augment[pivot_row] = augment[pivot_row], augment[pivot]
            det = -det
        scale = rows[pivot_row][col]
        det *= scale
        rows[pivot_row] = [value / scale for value in rows[pivot_row]]
        if augment is not None:
            augment[pivot_row] = [value / scale for value in augment[pivot_row]]
        for r in range(n_rows):
            if r == pivot_row or rows[r][col] == 0:
                continue
            factor = rows[r][col]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[pivot_row])]
            if augment is not None:
                augment[r] = [a - factor * b for a, b in zip(augment[r], augment[pivot_row])]
        pivot_row += 1
        if pivot_row == n_rows:
            break
    return pivot_row, det


def rank(matrix):
    rows = [list(row) for row in matrix.rows]
    found, _ = eliminate(rows)
    return found


def inverse(matrix):
    n, m = matrix.shape
    if n != m:
        raise ValueError("only square matrices have inverses")
    rows = [list(row) for row in matrix.rows]
    augment = [list(row) for row in Matrix.identity(n).rows]
    found, det = eliminate(rows, augment)
    if found < n or det == 0:
        raise SingularMatrixError("matrix is singular")
    return Matrix(augment), det


def solve(matrix, rhs):
    inv, _ = inverse(matrix)
    column = Matrix([[value] for value in rhs])
    return [row[0] for row in (inv @ column).rows]


def describe(values):
    parts = []
    for value in values:
        if value.denominator == 1:
            parts.append(str(value.numerator))
        else:
            parts.append(f"{value} (~{float(value):.3f})")
    return ", ".join(parts)


def solve_system(coefficients, rhs):
    a = Matrix(coefficients)
    det1 = a.det_laplace()
    inv, det2 = inverse(a)
    assert det1 == det2, "the two determinant methods disagree"
    print(f"A =\n{a!r}")
    print(f"det(A) = {det1}; A^-1 =\n{inv!r}")
    check = a @ inv == Matrix.identity(a.shape[0])
    solution = solve(a, rhs)
    print(f"x = {describe(solution)}")
    singular = Matrix([[1, 2], [2, 4]])
    try:
        inverse(singular)
        note = "inverted"
    except SingularMatrixError as error:
        note = f"second matrix: {error} (rank {rank(singular)})"
    norm = math.sqrt(sum(float(v) ** 2 for v in solution))
    return solution, check, note, round(norm, 4)
