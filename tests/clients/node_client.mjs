// A user's program of the @plylog/client tarball, run by node_client.rs in a
// fresh npm project that installed it: it imports nothing but the package.
//
// For each variant named on the command line (after the server's
// `host:port`), it creates a tic-tac-toe game, follows its events while
// both seats play it to a win, tries one move after the end and prints what
// happened, one line per step, `<variant>: ...`; the test compares them.
// Each check that fails throws, so the process exits non-zero.

import {
  Code,
  ConnectError,
  ErrorReason,
  MoveSchema,
  create,
  createPlylogClient,
  errorInfo,
  errorReason,
  withToken,
} from "@plylog/client";

// Everything here must be over well within the test's own limit.
const deadline = setTimeout(() => {
  console.error("node_client.mjs: timed out after 60 s");
  process.exit(2);
}, 60_000);

/** The transports, as a user would pick them. */
const VARIANTS = {
  // The Connect protocol with JSON over HTTP/1.1: the package's default.
  "connect-json": {},
  "connect-binary-h2": { protocol: "connect", binary: true, httpVersion: "2" },
  "grpc-web": { protocol: "grpc-web" },
  "grpc-web-h2": { protocol: "grpc-web", httpVersion: "2" },
  grpc: { protocol: "grpc" },
};

// X (seat 0) takes the top row; O (seat 1) plays in the middle one.
const MOVES = [
  [0, 0, 0],
  [1, 1, 0],
  [0, 0, 1],
  [1, 1, 1],
  [0, 0, 2],
];

function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

function place(row, col) {
  return create(MoveSchema, { kind: { case: "place", value: { row, col } } });
}

/**
 * Follows the game's events until the winning move: resolves `caughtUp`
 * with the caught-up marker's sequence, then returns the events seen.
 */
async function follow(client, gameId, onCaughtUp) {
  const events = [];
  const stream = client.streamEvents({ gameId, follow: true }, { timeoutMs: 30_000 });
  for await (const reply of stream) {
    if (reply.kind.case === "caughtUp") {
      onCaughtUp(reply.kind.value.sequence);
    } else if (reply.kind.case === "event") {
      const event = reply.kind.value;
      events.push(event);
      if (event.kind.case === "movePlayed" && event.kind.value.outcome?.kind.case === "win") {
        // Leaving the loop cancels the call: the game goes on streaming
        // (a rematch would come next) until the client hangs up.
        break;
      }
    }
  }
  return events;
}

async function play(name, address) {
  const options = VARIANTS[name];
  check(options !== undefined, `a variant named ${name}`);
  const baseUrl = `http://${address}`;
  const client = createPlylogClient({ baseUrl, defaultTimeoutMs: 10_000, ...options });
  const created = await client.createGame({
    gameId: `node-${name}-${Math.random().toString(16).slice(2, 10)}`,
    rules: { kind: { case: "mnk", value: { rows: 3, cols: 3, k: 3 } } },
    seats: [
      { playerId: "alice", symbol: "X" },
      { playerId: "bob", symbol: "O" },
    ],
  });
  const gameId = created.game.gameId;
  check(created.game.lastSequence === 1n, "the new game is at sequence 1");
  console.log(`${name}: created, ${created.seatTokens.length} seat tokens`);

  // The events, followed from before the first move.
  let caughtUp;
  const live = new Promise((resolve) => (caughtUp = resolve));
  const followed = follow(client, gameId, caughtUp);
  const marker = await Promise.race([
    live,
    followed.then(() => {
      throw new Error("the stream ended before its caught-up marker");
    }),
  ]);
  console.log(`${name}: following, caught up at ${marker}`);

  // Seat 0 plays with a client of its own holding its token; seat 1 sends
  // its token with each call.
  const alice = createPlylogClient({
    baseUrl,
    defaultTimeoutMs: 10_000,
    ...options,
    token: created.seatTokens[0],
  });
  let last;
  for (const [seat, row, col] of MOVES) {
    const request = { gameId, seat, move: place(row, col) };
    last =
      seat === 0
        ? await alice.submitMove(request)
        : await client.submitMove(request, withToken(created.seatTokens[1]));
    check(last.events.length === 1, "one event per move");
  }
  const outcome = last.events[0].kind.value.outcome;
  check(outcome?.kind.case === "win", "the last move wins");
  console.log(
    `${name}: played ${MOVES.length} moves, seat ${outcome.kind.value.seat} won at sequence ${last.game.lastSequence}`,
  );

  // A move after the end: refused, with its reason.
  try {
    await client.submitMove(
      { gameId, seat: 1, move: place(2, 2) },
      withToken(created.seatTokens[1]),
    );
    throw new Error("a move after the end was accepted");
  } catch (err) {
    check(err instanceof ConnectError, `a ConnectError, not ${err}`);
    const reason = errorReason(err);
    check(ErrorReason[reason] === ErrorReason.GAME_OVER, "the reason is in the ErrorReason enum");
    console.log(`${name}: refused: ${Code[err.code]} ${reason} ${errorInfo(err).domain}`);
  }

  // Every event, in order, each once, and the end.
  const events = await followed;
  const sequences = events.map((event) => Number(event.sequence));
  check(
    sequences.every((sequence, i) => sequence === i + 1),
    `sequences 1, 2, ...: ${sequences}`,
  );
  check(events[0].kind.case === "gameCreated", "the first event is game_created");
  const streamed = events.filter((event) => event.kind.case === "movePlayed");
  check(streamed.length === MOVES.length, `${MOVES.length} moves streamed`);
  streamed.forEach((event, i) => {
    const [seat, row, col] = MOVES[i];
    const played = event.kind.value;
    const cell = played.move.kind.value;
    check(
      played.seat === seat && cell.row === row && cell.col === col,
      `move ${i + 1} streamed as played`,
    );
  });
  const end = streamed.at(-1).kind.value.outcome;
  console.log(
    `${name}: streamed ${events.length} events, ${streamed.length} moves, the last a win for seat ${end.kind.value.seat}`,
  );
}

const [address, ...variants] = process.argv.slice(2);
check(address && variants.length > 0, "usage: node node_client.mjs host:port variant...");
for (const name of variants) {
  await play(name, address);
}
console.log("all variants played");
clearTimeout(deadline);
// Connect's HTTP/2 sessions stay open a while when idle: do not wait.
process.exit(0);
