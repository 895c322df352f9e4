#!/usr/bin/env python3
"""Generate oracle game traces from OpenSpiel for plylog's rule tests.

What it does
------------
Plays uniformly random games (each ply picks a uniformly random legal action)
with OpenSpiel (``pyspiel``, an independent C++ implementation of the games)
and writes every game, from the initial position to the terminal state, as one
JSON object per line (JSONL). One file per game configuration:

    tic_tac_toe.jsonl
    mnk_4x4_k3.jsonl  mnk_5x6_k4.jsonl  mnk_7x7_k5.jsonl
    connect_four_6x7_k4.jsonl (+ other sizes, OpenSpiel's connect_four takes
                               rows / columns / x_in_row parameters)
    gomoku_9x9_k5.jsonl  gomoku_15x15_k5.jsonl   (freestyle)
    othello_8x8.jsonl
    hex_5x5.jsonl  hex_7x7.jsonl  hex_11x11.jsonl

Names are ``<game>_<rows>x<cols>_k<k>``: rows first, then columns.

Line format (see tests/fixtures/openspiel/README.md for the full description):

    {"game": "mnk", "rows": R, "cols": C, "k": K,
     "moves": [[row, col], ...],
     "legal": [[[row, col], ...], ...],
     "outcome": {"winner": 0 | 1 | null}}

* seat 0 = OpenSpiel player 0 (moves first), seat 1 = player 1;
* a cell is [row, col], 0-based, row 0 = TOP row, col 0 = LEFT column;
* connect_four moves are 0-based column numbers; othello's pass is "pass";
* legal[i] is the sorted list of legal moves in the position before moves[i];
* winner null = draw (never in hex); "k" is omitted for othello and hex.

Coordinate conversion (OpenSpiel action id -> [row, col]) is ``divmod(id,
cols)`` for tic_tac_toe, mnk, gomoku, othello (othello id 64 = pass) and hex;
for connect_four the action id is the column. The script checks this on EVERY
ply by parsing ``str(state)`` before and after the move (the first printed
board line is row 0) and asserting that the new stone appears exactly at the
cell the trace records (for connect_four: in the recorded column, directly
above the highest stone, with the printed top line being the top row), and
that the legal list derived from the printed board matches OpenSpiel's where
that is a simple function of the board. A mismatch aborts the run. For hex it
also checks that printed line r is indented by exactly r spaces, that
OpenSpiel's action name is <column letter><row + 1> (action 1 on any board =
"b1" = [0, 1]), and that the game ends with returns +1/-1 for the last mover
(no draws, no swap action).

How to run
----------
    python3 -m venv /tmp/openspiel-venv
    /tmp/openspiel-venv/bin/pip install open_spiel
    /tmp/openspiel-venv/bin/python3 scripts/openspiel_traces.py --out tests/fixtures/openspiel

(i.e. ``python3 scripts/openspiel_traces.py --out tests/fixtures/openspiel``
with a Python that has ``pip install open_spiel``), from the repository root.
``--only NAME`` (repeatable) regenerates only the named files (file stem, e.g.
``--only gomoku_9x9_k5``).

Determinism
-----------
Each output file uses its own fixed seed (``CONFIGS`` below) and a fresh
``random.Random(seed)``; actions are chosen with ``rng.choice`` over OpenSpiel's
legal action list (ascending action ids). Given the same OpenSpiel version
(rules and legal-action order) and Python version (``random`` algorithm), the
output is byte-for-byte identical on every run. Written with OpenSpiel 2.0.2.
"""

import argparse
import json
import os
import random
import sys

import pyspiel

# (file stem, kind, pyspiel name, pyspiel params, rows, cols, k, games, seed)
CONFIGS = [
    ("tic_tac_toe", "tic_tac_toe", "tic_tac_toe", {}, 3, 3, 3, 300, 1001),
    # OpenSpiel mnk: m = number of COLUMNS (width), n = number of ROWS.
    ("mnk_4x4_k3", "mnk", "mnk", {"m": 4, "n": 4, "k": 3}, 4, 4, 3, 300, 2001),
    ("mnk_5x6_k4", "mnk", "mnk", {"m": 6, "n": 5, "k": 4}, 5, 6, 4, 300, 2002),
    ("mnk_7x7_k5", "mnk", "mnk", {"m": 7, "n": 7, "k": 5}, 7, 7, 5, 300, 2003),
    ("connect_four_6x7_k4", "connect_four", "connect_four",
     {"rows": 6, "columns": 7, "x_in_row": 4}, 6, 7, 4, 300, 3001),
    ("connect_four_4x5_k3", "connect_four", "connect_four",
     {"rows": 4, "columns": 5, "x_in_row": 3}, 4, 5, 3, 200, 3002),
    ("connect_four_5x4_k4", "connect_four", "connect_four",
     {"rows": 5, "columns": 4, "x_in_row": 4}, 5, 4, 4, 200, 3003),
    ("connect_four_7x9_k5", "connect_four", "connect_four",
     {"rows": 7, "columns": 9, "x_in_row": 5}, 7, 9, 5, 200, 3004),
    # OpenSpiel gomoku: square boards only ("size"); anti=False is normal
    # scoring (anti=True would make the player who completes a line LOSE),
    # wrap=False is a flat board. Any run of >= connect stones wins
    # (freestyle: overlines win).
    ("gomoku_9x9_k5", "gomoku", "gomoku",
     {"size": 9, "connect": 5, "dims": 2, "anti": False, "wrap": False},
     9, 9, 5, 200, 4001),
    ("gomoku_15x15_k5", "gomoku", "gomoku",
     {"size": 15, "connect": 5, "dims": 2, "anti": False, "wrap": False},
     15, 15, 5, 100, 4002),
    ("othello_8x8", "othello", "othello", {}, 8, 8, None, 200, 5001),
    # OpenSpiel hex: player 0 = black "x" joins the top and bottom rows,
    # player 1 = white "o" joins the left and right columns; the neighbours
    # of (r, c) are (r-1,c) (r-1,c+1) (r,c-1) (r,c+1) (r+1,c-1) (r+1,c).
    # board_size alone would set both num_rows and num_cols; all three are
    # given to be explicit. swap=False: no pie/swap rule (also the default).
    ("hex_5x5", "hex", "hex",
     {"board_size": 5, "num_rows": 5, "num_cols": 5, "swap": False},
     5, 5, None, 150, 6001),
    ("hex_7x7", "hex", "hex",
     {"board_size": 7, "num_rows": 7, "num_cols": 7, "swap": False},
     7, 7, None, 100, 6002),
    ("hex_11x11", "hex", "hex",
     {"board_size": 11, "num_rows": 11, "num_cols": 11, "swap": False},
     11, 11, None, 60, 6003),
]

OTHELLO_PASS = 64


def encode(kind, cols, action):
    """OpenSpiel action id -> our move encoding."""
    if kind == "connect_four":
        return action
    if kind == "othello" and action == OTHELLO_PASS:
        return "pass"
    r, c = divmod(action, cols)
    return [r, c]


def sort_key(move):
    # "pass" only ever appears alone; cells sort row-major, columns ascending.
    return (0,) if move == "pass" else (1, move)


def parse_board(kind, rows, cols, text):
    """str(state) -> list of row strings, row 0 = first printed row (top).

    Cell characters: '.' empty for mnk/tic_tac_toe/connect_four/gomoku/hex,
    '-' empty for othello; 'x'/'b' = player 0, 'o'/'w' = player 1.
    Hex prints row r as r spaces followed by "c " per cell (a rhombus leaning
    right, so (r, c) touches (r-1, c+1) and (r+1, c-1)).
    """
    lines = text.split("\n")
    if kind in ("mnk", "tic_tac_toe"):
        board = lines[:rows]
    elif kind == "connect_four":
        board = [ln for ln in lines if ln][:rows]
    elif kind == "gomoku":
        assert lines[0] in ("B", "W"), text
        board = lines[1:1 + rows]
    elif kind == "othello":
        # header line, column labels, then "<n> c c c ... <n>" for n = 1..8
        board = []
        for ln in lines:
            parts = ln.split()
            if len(parts) == cols + 2 and parts[0].isdigit():
                assert int(parts[0]) == len(board) + 1, text
                board.append("".join(parts[1:-1]))
    elif kind == "hex":
        board = []
        for r, ln in enumerate(lines):
            assert ln.startswith(" " * r) and ln[r:r + 1] != " ", (r, text)
            board.append("".join(ln.split()))
    else:
        raise ValueError(kind)
    assert len(board) == rows and all(len(r) == cols for r in board), text
    return board


EMPTY = {"mnk": ".", "tic_tac_toe": ".", "connect_four": ".", "gomoku": ".",
         "othello": "-", "hex": "."}
STONE = {"mnk": "xo", "tic_tac_toe": "xo", "connect_four": "xo", "gomoku": "bw",
         "othello": "xo", "hex": "xo"}


def check_ply(kind, rows, cols, before, after, player, move, legal):
    """Assert that the parsed boards agree with the recorded move encoding."""
    empty, stone = EMPTY[kind], STONE[kind][player]
    diff = [(r, c) for r in range(rows) for c in range(cols)
            if before[r][c] != after[r][c]]
    if kind == "connect_four":
        # legal columns: top printed row is empty in that column
        exp_legal = [c for c in range(cols) if before[0][c] == empty]
        assert legal == exp_legal, (legal, exp_legal, before)
        assert len(diff) == 1, diff
        (r, c), = diff
        assert c == move, (move, diff)
        assert after[r][c] == stone, (after, stone)
        # gravity: the stone rests on the bottom row or on another stone
        assert r == rows - 1 or before[r + 1][c] != empty, (r, c, before)
        return
    if kind == "othello":
        if move == "pass":
            assert legal == ["pass"] and not diff, (legal, diff)
            return
        r, c = move
        assert before[r][c] == empty and after[r][c] == stone, (move, before, after)
        # every other changed cell was flipped from the opponent to the mover
        for (rr, cc) in diff:
            if (rr, cc) != (r, c):
                assert before[rr][cc] == STONE[kind][1 - player], (rr, cc)
                assert after[rr][cc] == stone, (rr, cc)
        assert len(diff) >= 2, "an othello move flips at least one disc"
        return
    # mnk / tic_tac_toe / gomoku / hex: legal = all empty cells, row-major
    exp_legal = [[r, c] for r in range(rows) for c in range(cols)
                 if before[r][c] == empty]
    assert legal == exp_legal, (legal, exp_legal)
    assert diff == [tuple(move)], (move, diff)
    assert after[move[0]][move[1]] == stone, (move, after)


def check_action_string(kind, state, player, action, move):
    """OpenSpiel's own action names must agree with our [row, col]."""
    s = state.action_to_string(player, action)
    if kind in ("mnk", "tic_tac_toe"):
        assert s == "%s(%d,%d)" % ("xo"[player], move[0], move[1]), (s, move)
    elif kind == "gomoku":
        assert s == "%d,%d" % (move[0], move[1]), (s, move)
    elif kind == "othello":
        exp = "pass" if move == "pass" else "abcdefgh"[move[1]] + str(move[0] + 1)
        assert s == exp, (s, move)
    elif kind == "connect_four":
        assert s == "%s%d" % ("xo"[player], move), (s, move)
    elif kind == "hex":
        # letter = column (a = left), number = row + 1 (1 = top printed row)
        assert s == "%s%d" % (chr(ord("a") + move[1]), move[0] + 1), (s, move)


def play_game(game, kind, rows, cols, rng):
    state = game.new_initial_state()
    moves, legal_lists = [], []
    board = parse_board(kind, rows, cols, str(state))
    while not state.is_terminal():
        assert not state.is_chance_node()
        player = state.current_player()
        assert player in (0, 1), player
        actions = state.legal_actions()
        assert actions == sorted(actions), actions
        legal = sorted((encode(kind, cols, a) for a in actions), key=sort_key)
        if kind == "othello" and "pass" in legal:
            assert legal == ["pass"], legal
        action = rng.choice(actions)
        move = encode(kind, cols, action)
        check_action_string(kind, state, player, action, move)
        state.apply_action(action)
        after = parse_board(kind, rows, cols, str(state))
        check_ply(kind, rows, cols, board, after, player, move, legal)
        board = after
        moves.append(move)
        legal_lists.append(legal)
    returns = state.returns()
    if kind == "hex":
        # no draws in hex; the player who made the last move has won
        assert returns in ([1.0, -1.0], [-1.0, 1.0]), returns
        assert returns[player] == 1.0, (returns, player)
        assert all(a < rows * cols for a in state.history()), "no swap move"
    if returns[0] > returns[1]:
        winner = 0
    elif returns[1] > returns[0]:
        winner = 1
    else:
        assert returns[0] == returns[1] == 0, returns
        winner = None
    return moves, legal_lists, winner


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--only", action="append", default=[],
                    help="only write this file stem (repeatable)")
    args = ap.parse_args()

    names = set(pyspiel.registered_names())
    os.makedirs(args.out, exist_ok=True)
    for (stem, kind, name, params, rows, cols, k, count, seed) in CONFIGS:
        if args.only and stem not in args.only:
            continue
        if name not in names:
            print("SKIP %s: game %r not registered in this pyspiel" % (stem, name),
                  file=sys.stderr)
            continue
        spec = pyspiel.load_game(name).get_type().parameter_specification
        missing = [p for p in params if p not in spec]
        if missing:
            print("SKIP %s: %r has no parameter(s) %s" % (stem, name, missing),
                  file=sys.stderr)
            continue
        game = pyspiel.load_game(name, params)
        rng = random.Random(seed)
        path = os.path.join(args.out, stem + ".jsonl")
        wins = [0, 0, 0]
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for _ in range(count):
                moves, legal, winner = play_game(game, kind, rows, cols, rng)
                rec = {"game": kind, "rows": rows, "cols": cols}
                if k is not None:
                    rec["k"] = k
                rec["moves"] = moves
                rec["legal"] = legal
                rec["outcome"] = {"winner": winner}
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")
                wins[2 if winner is None else winner] += 1
        print("%-26s %4d games  seat0 %4d  seat1 %4d  draw %4d  %9d bytes"
              % (stem + ".jsonl", count, wins[0], wins[1], wins[2],
                 os.path.getsize(path)))


if __name__ == "__main__":
    main()
