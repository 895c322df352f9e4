#!/usr/bin/env python3
"""Sanity-check the OpenSpiel oracle traces in tests/fixtures/openspiel/.

Pure Python, no dependencies (does NOT need open_spiel). Replays every game of
every *.jsonl file through a small independent reference implementation of
the rules and checks, per ply, that:

* the recorded legal list is sorted (row-major cells / ascending columns),
  matches the reference legal moves, and contains the move played;
* the game does not end early (no line / no end of othello before the last
  move) and is terminal after the last move;
* the recorded winner matches (null = draw).

Rules used: m,n,k / tic-tac-toe / gomoku = first line of >= k stones in any of
the 4 directions wins (overlines win), full board = draw; connect four = same
with gravity; othello = standard 8x8, black (seat 0) first, d4/e5 white and
d5/e4 black with row 0 = rank 1 at the top, a player with no capturing move
must pass, the game ends when neither side can move, more discs wins;
hex = seat 0 wins by joining row 0 to the last row, seat 1 by joining column 0
to the last column, with the six neighbours (r-1,c) (r-1,c+1) (r,c-1) (r,c+1)
(r+1,c-1) (r+1,c) (breadth-first search over the mover's stones), no swap
rule, no draws (a full board must have a winner).

Also prints per-file counts and how many games were won by an overline (the
winning move made a run longer than k) and how many othello passes occur (for
hex: how many games filled the whole board).

Run: python3 scripts/check_openspiel_traces.py tests/fixtures/openspiel
"""

import glob
import json
import os
import sys
from collections import deque

DIRS4 = [(0, 1), (1, 0), (1, 1), (1, -1)]
DIRS8 = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc]
HEX_NEIGHBOURS = [(-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)]


def hex_connected(board, rows, cols, player):
    """Does `player` join its two edges? Seat 0: top row to bottom row;
    seat 1: left column to right column."""
    if player == 0:
        start = [(0, c) for c in range(cols)]
        at_goal = lambda r, c: r == rows - 1
    else:
        start = [(r, 0) for r in range(rows)]
        at_goal = lambda r, c: c == cols - 1
    seen = {rc for rc in start if board[rc[0]][rc[1]] == player}
    todo = deque(seen)
    while todo:
        r, c = todo.popleft()
        if at_goal(r, c):
            return True
        for dr, dc in HEX_NEIGHBOURS:
            rr, cc = r + dr, c + dc
            if (0 <= rr < rows and 0 <= cc < cols and (rr, cc) not in seen
                    and board[rr][cc] == player):
                seen.add((rr, cc))
                todo.append((rr, cc))
    return False


def run_through(board, rows, cols, r, c):
    """Longest run of board[r][c]'s colour through (r, c) over the 4 axes."""
    who, best = board[r][c], 0
    for dr, dc in DIRS4:
        n = 1
        for s in (1, -1):
            rr, cc = r + s * dr, c + s * dc
            while 0 <= rr < rows and 0 <= cc < cols and board[rr][cc] == who:
                n += 1
                rr, cc = rr + s * dr, cc + s * dc
        best = max(best, n)
    return best


def othello_flips(board, player, r, c):
    if board[r][c] is not None:
        return []
    flips = []
    for dr, dc in DIRS8:
        line, rr, cc = [], r + dr, c + dc
        while 0 <= rr < 8 and 0 <= cc < 8 and board[rr][cc] == 1 - player:
            line.append((rr, cc))
            rr, cc = rr + dr, cc + dc
        if line and 0 <= rr < 8 and 0 <= cc < 8 and board[rr][cc] == player:
            flips.extend(line)
    return flips


def othello_moves(board, player):
    return [[r, c] for r in range(8) for c in range(8)
            if othello_flips(board, player, r, c)]


def replay(g):
    kind, rows, cols = g["game"], g["rows"], g["cols"]
    k = g.get("k")
    moves, legal = g["moves"], g["legal"]
    assert len(moves) == len(legal) > 0
    board = [[None] * cols for _ in range(rows)]
    stats = {"overline": False, "passes": 0, "full": False}
    if kind == "othello":
        assert (rows, cols) == (8, 8) and k is None
        board[3][3] = board[4][4] = 1
        board[3][4] = board[4][3] = 0
    if kind == "hex":
        assert rows >= 2 and cols >= 2 and k is None
    player, winner, over = 0, None, False
    for i, (m, lg) in enumerate(zip(moves, legal)):
        assert not over, "moves after the game ended"
        if kind == "othello":
            ref = othello_moves(board, player) or ["pass"]
        elif kind == "connect_four":
            ref = [c for c in range(cols) if board[0][c] is None]
        else:
            ref = [[r, c] for r in range(rows) for c in range(cols)
                   if board[r][c] is None]
        assert lg == ref, (i, lg, ref)
        assert m in lg, (i, m)
        if kind == "othello":
            if m == "pass":
                stats["passes"] += 1
            else:
                r, c = m
                for rr, cc in othello_flips(board, player, r, c):
                    board[rr][cc] = player
                board[r][c] = player
                if not othello_moves(board, 0) and not othello_moves(board, 1):
                    over = True
                    n0 = sum(row.count(0) for row in board)
                    n1 = sum(row.count(1) for row in board)
                    winner = 0 if n0 > n1 else 1 if n1 > n0 else None
        elif kind == "hex":
            r, c = m
            board[r][c] = player
            full = all(x is not None for row in board for x in row)
            # only the mover can have completed a connection
            assert not hex_connected(board, rows, cols, 1 - player), i
            if hex_connected(board, rows, cols, player):
                over, winner = True, player
                stats["full"] = full
            else:
                assert not full, "full hex board without a winner"
        else:
            if kind == "connect_four":
                c = m
                r = max(rr for rr in range(rows) if board[rr][c] is None)
            else:
                r, c = m
            board[r][c] = player
            run = run_through(board, rows, cols, r, c)
            if run >= k:
                over, winner = True, player
                stats["overline"] = run > k
            elif all(x is not None for row in board for x in row):
                over, winner = True, None
        player = 1 - player
    assert over, "game not finished"
    assert winner == g["outcome"]["winner"], (winner, g["outcome"])
    return winner, stats


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/openspiel"
    total_games = total_bytes = 0
    for path in sorted(glob.glob(os.path.join(d, "*.jsonl"))):
        res = [0, 0, 0]
        overlines = passes = plies = full = 0
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                g = json.loads(line)
                try:
                    winner, st = replay(g)
                except AssertionError as e:
                    sys.exit("%s line %d: %r" % (path, n, e))
                res[2 if winner is None else winner] += 1
                overlines += st["overline"]
                passes += st["passes"]
                full += st["full"]
                plies += len(g["moves"])
        games = sum(res)
        size = os.path.getsize(path)
        total_games += games
        total_bytes += size
        print("%-26s %4d games (seat0 %d, seat1 %d, draw %d) %6d plies "
              "overline wins %d, passes %d, %d bytes"
              % (os.path.basename(path), games, res[0], res[1], res[2], plies,
                 overlines, passes, size)
              + (", full boards %d" % full if g["game"] == "hex" else ""))
    print("total: %d games, %d bytes" % (total_games, total_bytes))


if __name__ == "__main__":
    main()
