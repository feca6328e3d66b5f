# parity copy of tests/programs/hanoi.py; its entry is called at module level (last lines)
# breakpoints: 5, 8
def hanoi(n, src, dst, via, moves):
    if n == 0:
        return moves
    hanoi(n - 1, src, via, dst, moves)
    moves.append((src, dst))
    hanoi(n - 1, via, dst, src, moves)
    return moves


result = hanoi(3, "A", "C", "B", [])
print(result)
