"""A Polynomial class with operator overloading, evaluation, derivatives and Newton's method."""
# entry: analyse([-6, 11, -6, 1], [1, 1], 3.6)
import math
from fractions import Fraction

TOLERANCE = 1e-9
MAX_ITERATIONS = 20


class Polynomial:
    """Coefficients are stored lowest power first: [c0, c1, c2] is c0 + c1*x + c2*x^2."""

    def __init__(self, coefficients):
        coeffs = list(coefficients)
        while len(coeffs) > 1 and coeffs[-1] == 0:
            coeffs.pop()
        self.coeffs = coeffs or [0]

    @property
    def degree(self):
        return len(self.coeffs) - 1

    def __repr__(self):
        terms = []
        for power in range(self.degree, -1, -1):
            c = self.coeffs[power]
            if c == 0:
                continue
            sign = "-" if c < 0 else "+"
            size = abs(c)
            body = "" if size == 1 and power else str(size)
            if power == 1:
                body += "x"
            elif power > 1:
                body += f"x^{power}"
            terms.append(f"{sign} {body}")
        if not terms:
            return "0"
        text = " ".join(terms)
        return text[2:] if text.startswith("+") else "-" + text[2:]

    def __eq__(self, other):
        return isinstance(other, Polynomial) and self.coeffs == other.coeffs

    def __add__(self, other):
        size = max(len(self.coeffs), len(other.coeffs))
        a = self.coeffs + [0] * (size - len(self.coeffs))
        b = other.coeffs + [0] * (size - len(other.coeffs))
        return Polynomial([x + y for x, y in zip(a, b)])

    def __neg__(self):
        return Polynomial([-c for c in self.coeffs])

    def __sub__(self, other):
        return self + (-other)

    def __mul__(self, other):
        result = [0] * (len(self.coeffs) + len(other.coeffs) - 1)
        for i, a in enumerate(self.coeffs):
            for j, b in enumerate(other.coeffs):
                result[i + j] += a * b
        return Polynomial(result)

    def __call__(self, x):
        total = 0
        for c in reversed(self.coeffs):
            total = total * x + c
        return total

    def derivative(self):
        return Polynomial([power * c for power, c in enumerate(self.coeffs)][1:])

    def divmod_linear(self, root):
        """Synthetic division by (x - root): returns the quotient and the remainder."""
        quotient = []
        carry = 0
        for c in reversed(self.coeffs):
            carry = carry * root + c
            quotient.append(carry)
        remainder = quotient.pop()
        return Polynomial(list(reversed(quotient))), remainder


def newton(poly, guess):
    slope = poly.derivative()
    x = guess
    for iteration in range(1, MAX_ITERATIONS + 1):
        fx = poly(x)
        if abs(fx) < TOLERANCE:
            return x, iteration
        dx = slope(x)
        if dx == 0:
            break
        x = x - fx / dx
    return x, MAX_ITERATIONS


def analyse(coefficients, factor, guess):
    p = Polynomial(coefficients)
    q = Polynomial(factor)
    product = p * q
    print(f"p = {p}")
    print(f"p * q = {product}")
    print(f"p' = {p.derivative()}")
    root, steps = newton(p, guess)
    exact = round(root)
    quotient, remainder = p.divmod_linear(exact)
    print(f"root near {root:.6f} after {steps} steps; p / (x - {exact}) = {quotient} r {remainder}")
    area = Fraction(0)
    for power, c in enumerate(p.coeffs):
        area += Fraction(c, power + 1)
    return {
        "sum_check": (p + q) - q == p,
        "root": round(root, 6),
        "quotient": repr(quotient),
        "integral_0_1": str(area),
        "gap": math.isclose(p(exact), 0, abs_tol=TOLERANCE),
    }
