"""Keeps a sorted list of scores with a recursive binary search for the insertion point."""
# entry: build_leaderboard([("ann", 42), ("bob", 17), ("cy", 42), ("dee", 99), ("eve", 5)], 3)


def insertion_point(scores, score, lo, hi):
    if lo >= hi:
        return lo
    mid = (lo + hi) // 2
    if scores[mid][1] >= score:
        return insertion_point(scores, score, mid + 1, hi)
    return insertion_point(scores, score, lo, mid)


def insert_score(board, name, score):
    index = insertion_point(board, score, 0, len(board))
    board.insert(index, (name, score))
    return index


def rank_of(board, name):
    for place, (who, _) in enumerate(board, start=1):
        if who == name:
            return place
    return None


def build_leaderboard(entries, keep):
    board = []
    for name, score in entries:
        place = insert_score(board, name, score)
        print(f"{name} enters at place {place + 1}")
    del board[keep:]
    return {"top": board, "ann": rank_of(board, "ann"), "eve": rank_of(board, "eve")}
