// plylog from TypeScript: the package's typed client (src/index.ts, over the
// code protoc-gen-es generated in gen/, see buf.gen.yaml). An application
// imports the same names from "@plylog/client".
//
// Creates a tic-tac-toe game, plays the centre, plays it again and prints
// what the refusal says; the last line is the ErrorInfo reason. `npm run
// check` type-checks it; `npm run example` compiles it into build/ and runs
// it against a server (Node 20 runs no TypeScript). Its arguments: the
// server's address and the protocol (connect, grpc-web or grpc):
//
//   npm run example -- 127.0.0.1:50051 grpc

import {
  Code,
  ConnectError,
  ErrorReason,
  MoveSchema,
  type Protocol,
  create,
  createPlylogClient,
  errorReason,
  withToken,
} from "./src/index.js";

async function main(address: string, protocol: Protocol): Promise<void> {
  const client = createPlylogClient({ baseUrl: `http://${address}`, protocol });
  const created = await client.createGame({
    gameId: `ts-${Math.random().toString(16).slice(2, 10)}`,
    rules: { kind: { case: "mnk", value: { rows: 3, cols: 3, k: 3 } } },
    seats: [
      { playerId: "alice", symbol: "X" },
      { playerId: "bob", symbol: "O" },
    ],
  });
  const gameId = created.game!.gameId;
  // Each seat's token goes in the headers of its moves (none when the
  // server runs with --no-seat-tokens: withToken then adds nothing).
  const centre = create(MoveSchema, {
    kind: { case: "place", value: { row: 1, col: 1 } },
  });
  const played = await client.submitMove(
    { gameId, seat: 0, move: centre },
    withToken(created.seatTokens[0]),
  );
  console.log(`sequence: ${played.game!.lastSequence}`);
  try {
    await client.submitMove({ gameId, seat: 1, move: centre }, withToken(created.seatTokens[1]));
  } catch (err) {
    const error = ConnectError.from(err);
    console.log("code:", Code[error.code]);
    console.log("message:", error.rawMessage);
    const reason = errorReason(error);
    console.log("reason:", reason);
    // The same reasons, as the enum a client can switch on.
    console.log("enum value:", ErrorReason[reason as keyof typeof ErrorReason]);
    return;
  }
  throw new Error("the second move on the same cell was accepted");
}

await main(process.argv[2] ?? "127.0.0.1:50051", (process.argv[3] ?? "connect") as Protocol);
