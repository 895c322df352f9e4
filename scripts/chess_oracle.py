#!/usr/bin/env python3
"""Seeded random chess games played by python-chess, an independent
implementation, as JSON lines: what python-chess says of every position, for
tests/clients/chess_oracle.rs to compare with plylog's rules ply by ply.

Each game starts with a line {"start": FEN}; then one line per position:

  {"fen": board.fen(),
   "legal": sorted "UCI SAN" of every legal move,
   "check", "checkmate", "stalemate", "insufficient",
   "claim_threefold", "claim_fifty", "fivefold", "seventyfive": booleans,
   "move": the UCI move played next (absent at the last position)}

A game goes on until python-chess says it is over without a claim
(checkmate, stalemate, insufficient material, fivefold repetition, the
75-move rule) or --max-plies. Each move is drawn with random.Random(seed +
game): uniformly among the legal moves, except that a third of the time a
piece goes back where it came from two plies earlier when it can, so that
positions repeat (threefold, fivefold) as often as games reach the 50- and
75-move rules.

python-chess is GPL-3.0; nothing of it is in plylog: only its answers are
compared. Run: python3 scripts/chess_oracle.py --seed 7 --games 12
"""

import argparse
import json
import random

import chess

# Starts besides the standard one: castling both ways, en passant, promotion.
STARTS = [
    chess.STARTING_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "8/8/4k3/8/2pP4/8/8/4K3 b - d3 0 1",
]


def describe(board):
    legal = list(board.legal_moves)
    return {
        "fen": board.fen(),
        "legal": sorted(f"{board.uci(m)} {board.san(m)}" for m in legal),
        "check": board.is_check(),
        "checkmate": board.is_checkmate(),
        "stalemate": board.is_stalemate(),
        "insufficient": board.is_insufficient_material(),
        "claim_threefold": board.can_claim_threefold_repetition(),
        "claim_fifty": board.can_claim_fifty_moves(),
        "fivefold": board.is_fivefold_repetition(),
        "seventyfive": board.is_seventyfive_moves(),
    }


def pick(board, rng):
    legal = list(board.legal_moves)
    if len(board.move_stack) >= 2 and rng.random() < 1 / 3:
        earlier = board.move_stack[-2]
        back = [m for m in legal if m.from_square == earlier.to_square
                and m.to_square == earlier.from_square]
        if back:
            return back[0]
    return rng.choice(legal)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--games", type=int, required=True)
    parser.add_argument("--max-plies", type=int, default=400)
    args = parser.parse_args()
    for game in range(args.games):
        rng = random.Random(args.seed + game)
        start = STARTS[game % len(STARTS)]
        board = chess.Board(start)
        print(json.dumps({"start": start}))
        for _ in range(args.max_plies):
            line = describe(board)
            if board.is_game_over(claim_draw=False):
                print(json.dumps(line))
                break
            move = pick(board, rng)
            line["move"] = board.uci(move)
            print(json.dumps(line))
            board.push(move)
        else:
            print(json.dumps(describe(board)))


if __name__ == "__main__":
    main()
