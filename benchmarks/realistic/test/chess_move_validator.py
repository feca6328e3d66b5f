"""A chess move validator: piece classes generate moves, the board rejects illegal ones and detects check."""
# entry: play_game({"e1": "K", "a1": "R", "h1": "R", "b1": "N", "d2": "P", "f2": "P", "e8": "k", "d8": "q", "c5": "b"}, ["d2d4", "c5d4", "e1c1", "f2f3", "d8a5", "f3f4", "b1c3", "a5a1", "e1f2", "e1d2"])
from itertools import product

FILES = "abcdefgh"
RANKS = "12345678"
WHITE, BLACK = "white", "black"
KNIGHT_JUMPS = [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)]
KING_STEPS = [(df, dr) for df, dr in product((-1, 0, 1), repeat=2) if (df, dr) != (0, 0)]
ROOK_DIRS = [(1, 0), (-1, 0), (0, 1), (0, -1)]
BISHOP_DIRS = [(1, 1), (1, -1), (-1, 1), (-1, -1)]


class IllegalMove(Exception):
    def __init__(self, move, reason):
        super().__init__(f"{move}: {reason}")
        self.move = move


def square_name(square):
    file, rank = square
    return FILES[file] + RANKS[rank]


def parse_square(text):
    if len(text) != 2 or text[0] not in FILES or text[1] not in RANKS:
        raise ValueError(f"bad square {text!r}")
    return FILES.index(text[0]), RANKS.index(text[1])


def on_board(file, rank):
    return 0 <= file < 8 and 0 <= rank < 8


class Piece:
    symbol = "?"

    def __init__(self, colour):
        self.colour = colour
        self.moved = False

    def __repr__(self):
        letter = self.symbol.upper() if self.colour == WHITE else self.symbol
        return f"{letter}"

    def targets(self, board, square):
        raise NotImplementedError

    def attacks(self, board, square):
        return self.targets(board, square)

    def can_move(self, board, origin, target):
        return target in set(self.targets(board, origin))

    def hits(self, board, origin, square):
        """Whether this piece on origin attacks square; short-range pieces reach two squares at most."""
        if max(abs(square[0] - origin[0]), abs(square[1] - origin[1])) > 2:
            return False
        return square in set(self.attacks(board, origin))


class SlidingPiece(Piece):
    directions = []

    def hits(self, board, origin, square):
        """Walk the one ray from origin towards square, if there is one, and stop at a blocker."""
        df, dr = square[0] - origin[0], square[1] - origin[1]
        if df and dr and abs(df) != abs(dr):
            return False
        step = ((df > 0) - (df < 0), (dr > 0) - (dr < 0))
        if step not in self.directions:
            return False
        f, r = origin[0] + step[0], origin[1] + step[1]
        while (f, r) != square:
            if board.at((f, r)) is not None:
                return False
            f, r = f + step[0], r + step[1]
        return True

    def can_move(self, board, origin, target):
        occupant = board.at(target)
        if occupant is not None and occupant.colour == self.colour:
            return False
        return self.hits(board, origin, target)

    def targets(self, board, square):
        file, rank = square
        for df, dr in self.directions:
            f, r = file + df, rank + dr
            while on_board(f, r):
                occupant = board.at((f, r))
                if occupant is None:
                    yield f, r
                elif occupant.colour != self.colour:
                    yield f, r
                    break
                else:
                    break
                f, r = f + df, r + dr


class Rook(SlidingPiece):
    symbol = "r"
    directions = ROOK_DIRS


class Bishop(SlidingPiece):
    symbol = "b"
    directions = BISHOP_DIRS


class Queen(SlidingPiece):
    symbol = "q"
    directions = ROOK_DIRS + BISHOP_DIRS


class Knight(Piece):
    symbol = "n"

    def targets(self, board, square):
        file, rank = square
        for df, dr in KNIGHT_JUMPS:
            f, r = file + df, rank + dr
            if on_board(f, r):
                occupant = board.at((f, r))
                if occupant is None or occupant.colour != self.colour:
                    yield f, r


class King(Piece):
    symbol = "k"

    def targets(self, board, square):
        file, rank = square
        for df, dr in KING_STEPS:
            f, r = file + df, rank + dr
            if on_board(f, r):
                occupant = board.at((f, r))
                if occupant is None or occupant.colour != self.colour:
                    yield f, r


class Pawn(Piece):
    symbol = "p"

    def __init__(self, colour):
        super().__init__(colour)
        self.forward = 1 if colour == WHITE else -1

    def targets(self, board, square):
        file, rank = square
        one = (file, rank + self.forward)
        if on_board(*one) and board.at(one) is None:
            yield one
            two = (file, rank + 2 * self.forward)
            if not self.moved and board.at(two) is None:
                yield two
        yield from self.attacks(board, square, only_captures=True)

    def attacks(self, board, square, only_captures=False):
        file, rank = square
        for df in (-1, 1):
            target = (file + df, rank + self.forward)
            if not on_board(*target):
                continue
            occupant = board.at(target)
            if not only_captures or (occupant is not None and occupant.colour != self.colour):
                yield target


PIECE_CLASSES = {cls.symbol: cls for cls in (Rook, Knight, Bishop, Queen, King, Pawn)}


class Board:
    def __init__(self, placement):
        self.squares = {}
        for name, letter in placement.items():
            colour = WHITE if letter.isupper() else BLACK
            self.squares[parse_square(name)] = PIECE_CLASSES[letter.lower()](colour)
        self.to_move = WHITE
        self.captured = []

    def at(self, square):
        return self.squares.get(square)

    def king_square(self, colour):
        for square, piece in self.squares.items():
            if isinstance(piece, King) and piece.colour == colour:
                return square
        raise LookupError(f"no {colour} king")

    def attacked(self, square, by_colour):
        for origin, piece in list(self.squares.items()):
            if piece.colour == by_colour and piece.hits(self, origin, square):
                return True
        return False

    def in_check(self, colour):
        enemy = BLACK if colour == WHITE else WHITE
        return self.attacked(self.king_square(colour), enemy)

    def castle(self, move, king, origin, target):
        if king.moved or self.in_check(king.colour):
            raise IllegalMove(move, "castling is no longer allowed")
        step = 1 if target[0] > origin[0] else -1
        rook_square = (7 if step == 1 else 0, origin[1])
        rook = self.at(rook_square)
        if not isinstance(rook, Rook) or rook.moved:
            raise IllegalMove(move, "no unmoved rook to castle with")
        enemy = BLACK if king.colour == WHITE else WHITE
        file = origin[0] + step
        while file != rook_square[0]:
            if self.at((file, origin[1])) is not None:
                raise IllegalMove(move, "pieces stand between king and rook")
            if abs(file - origin[0]) <= 2 and self.attacked((file, origin[1]), enemy):
                raise IllegalMove(move, "king would cross an attacked square")
            file += step
        del self.squares[origin], self.squares[rook_square]
        self.squares[target] = king
        self.squares[(target[0] - step, origin[1])] = rook
        king.moved = rook.moved = True

    def play(self, move):
        origin, target = parse_square(move[:2]), parse_square(move[2:4])
        piece = self.at(origin)
        if piece is None:
            raise IllegalMove(move, "no piece on the starting square")
        if piece.colour != self.to_move:
            raise IllegalMove(move, f"it is {self.to_move}'s turn")
        if isinstance(piece, King) and abs(target[0] - origin[0]) == 2:
            self.castle(move, piece, origin, target)
        else:
            if not piece.can_move(self, origin, target):
                raise IllegalMove(move, f"{piece!r} cannot reach {square_name(target)}")
            taken = self.squares.pop(target, None)
            self.squares[target] = self.squares.pop(origin)
            if self.in_check(piece.colour):
                self.squares[origin] = self.squares.pop(target)
                if taken is not None:
                    self.squares[target] = taken
                raise IllegalMove(move, "would leave the king in check")
            piece.moved = True
            if taken is not None:
                self.captured.append(repr(taken))
        self.to_move = BLACK if self.to_move == WHITE else WHITE
        return self.in_check(self.to_move)


def play_game(placement, moves):
    board = Board(placement)
    log = []
    for move in moves:
        try:
            check = board.play(move)
        except IllegalMove as error:
            log.append(f"rejected {error}")
            continue
        log.append(move + ("+" if check else ""))
    print(" ".join(entry for entry in log if not entry.startswith("rejected")))
    return [entry for entry in log if entry.startswith("rejected")], board.captured, board.to_move
