"""Server memory per live 3x3 game: the server's RSS growth over N games,
divided by N (issue 15's goal: at most 4 KB).

    scripts/memory-per-game.py ADDR PID MODE [GAMES] [SEED]

ADDR is a plylog server started with --no-seat-tokens, PID its process
(its RSS is read from /proc/PID/status). MODE `one` plays one move in
each game, `end` plays random moves (seeded) until the game ends. 200
warm-up games come first. Needs the Python packages of
examples/python/requirements.txt, whose example generates the stubs.
"""

import importlib.util
import pathlib
import random
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "python" / "error_details.py"
spec = importlib.util.spec_from_file_location("error_details", EXAMPLE)
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)

import grpc  # noqa: E402

service, service_grpc, game = example.stubs()


def rss(pid):
    """The process's resident set, in bytes."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    sys.exit(f"no VmRSS for process {pid}")


def play(client, rng, mode, games):
    """Creates `games` 3x3 games and plays them; returns the moves played."""
    moves = 0
    for _ in range(games):
        created = client.CreateGame(
            service.CreateGameRequest(
                rules=game.RuleSet(mnk=game.MnkRules(rows=3, cols=3, k=3)),
                seats=[game.Seat(player_id="a", symbol="X"), game.Seat(player_id="b", symbol="O")],
            )
        ).game
        cells = [(r, c) for r in range(3) for c in range(3)]
        rng.shuffle(cells)
        for i, (row, col) in enumerate(cells):
            reply = client.SubmitMove(
                service.SubmitMoveRequest(
                    game_id=created.game_id, seat=i % 2, move=game.Move(place=game.Place(row=row, col=col))
                )
            )
            moves += 1
            if mode == "one" or reply.game.position.status != game.GAME_STATUS_IN_PROGRESS:
                break
    return moves


def main():
    addr, pid, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    games = int(sys.argv[4]) if len(sys.argv) > 4 else 5000
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 15
    if mode not in ("one", "end"):
        sys.exit("MODE is one or end")
    client = service_grpc.GameServiceStub(grpc.insecure_channel(addr))
    rng = random.Random(seed)
    play(client, rng, mode, 200)
    before = rss(pid)
    moves = play(client, rng, mode, games)
    after = rss(pid)
    print(f"mode={mode} games={games} moves={moves} seed={seed} rss_before={before} rss_after={after} "
          f"bytes_per_game={(after - before) / games:.0f}")


if __name__ == "__main__":
    main()
