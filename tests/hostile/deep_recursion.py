import sys
sys.setrecursionlimit(10**6)


def down(n):
    return 0 if n == 0 else 1 + down(n - 1)


down(10**5)
