// The dashboard's picture of one game: its fixed setup (kind, size, seats)
// and a mutable board state that applies the events of the log one by one.
// Pure: no DOM, no network, no clock (times come in as arguments).
//
// Coordinates follow the API: 0-based, (0,0) top-left. A board cell is keyed
// row * cols + col in a sparse Map, so a 1000x1000 board with few pieces
// stays small.

import type { Timestamp, Duration } from "@bufbuild/protobuf/wkt";
import {
  ChessPieceKind,
  ChessSide,
  ChessVariant,
  GameStatus,
  type Cell,
  type Clocks,
  type Game,
  type GameEvent,
  type Jump,
  type MovePlayed,
  type Outcome,
  type Position,
  type RuleSet,
  type Seat,
} from "./gen/plylog/v1/game_pb";

/** The rule set kinds, spelled as the DOM contract spells them. */
export type Kind =
  | "mnk"
  | "connect_four"
  | "gomoku"
  | "wild"
  | "othello"
  | "snakes_ladders"
  | "hex"
  | "chess";

export const KINDS: Kind[] = [
  "mnk",
  "connect_four",
  "gomoku",
  "wild",
  "othello",
  "snakes_ladders",
  "hex",
  "chess",
];

export const KIND_NAMES: Record<Kind, string> = {
  mnk: "m,n,k",
  connect_four: "Connect Four",
  gomoku: "gomoku",
  wild: "wild tic-tac-toe",
  othello: "Othello",
  snakes_ladders: "snakes and ladders",
  hex: "Hex",
  chess: "chess",
};

/** The fixed setup of a game, read off its rules and seats. */
export interface Setup {
  kind: Kind;
  /** Board rows (0 for snakes and ladders). */
  rows: number;
  /** Board columns (0 for snakes and ladders). */
  cols: number;
  /** Snakes and ladders: the number of squares; 0 otherwise. */
  squares: number;
  /** Snakes and ladders: the jumps. */
  jumps: Jump[];
  seats: Seat[];
  /** Whether the game has a time control (its clocks change on every move). */
  timed: boolean;
  /** Per-move limit and increment of a timed game, in ms (0: none). */
  perMoveMs: number;
  incrementMs: number;
  label: string;
}

export function kindOf(rules: RuleSet | undefined): Kind | undefined {
  switch (rules?.kind.case) {
    case "mnk":
      return "mnk";
    case "connectFour":
      return "connect_four";
    case "gomoku":
      return "gomoku";
    case "wild":
      return "wild";
    case "othello":
      return "othello";
    case "snakesLadders":
      return "snakes_ladders";
    case "hex":
      return "hex";
    case "chess":
      return "chess";
    default:
      return undefined;
  }
}

/** A short human label for a rule set, e.g. "m,n,k (19x19, k=5)". */
export function rulesLabel(rules: RuleSet | undefined): string {
  const k = rules?.kind;
  switch (k?.case) {
    case "mnk": {
      const { rows, cols, k: kk } = k.value;
      if (rows === 3 && cols === 3 && kk === 3) return "tic-tac-toe";
      return `m,n,k (${rows}x${cols}, k=${kk})`;
    }
    case "connectFour": {
      const v = k.value;
      const base = `Connect Four (${v.rows ?? 6}x${v.cols ?? 7}, k=${v.k ?? 4})`;
      return v.popOut ? `${base} Pop Out` : base;
    }
    case "gomoku": {
      const v = k.value;
      return `gomoku (${v.rows ?? 15}x${v.cols ?? 15}, k=${v.k ?? 5})`;
    }
    case "wild": {
      const v = k.value;
      return `wild tic-tac-toe (${v.rows ?? 3}x${v.cols ?? 3}, k=${v.k ?? 3})`;
    }
    case "othello": {
      const n = k.value.size ?? 8;
      return `Othello (${n}x${n})`;
    }
    case "snakesLadders": {
      const v = k.value;
      return `snakes and ladders (${v.squares ?? 100} squares, ${v.jumps.length} jumps)`;
    }
    case "hex": {
      const n = k.value.size ?? 11;
      return `Hex (${n}x${n}${k.value.swap ? ", swap" : ""})`;
    }
    case "chess": {
      const name = k.value.variant === ChessVariant.CHESS960 ? "Chess960" : "chess";
      return k.value.fen && k.value.variant !== ChessVariant.CHESS960 ? `${name} (from FEN)` : name;
    }
    default:
      return "unknown";
  }
}

export function durationMs(d: Duration | undefined): number {
  if (!d) return 0;
  return Number(d.seconds) * 1000 + Math.floor(d.nanos / 1e6);
}

export function timestampMs(t: Timestamp | undefined): number | undefined {
  if (!t) return undefined;
  return Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6);
}

export function setupOf(game: Game): Setup {
  const rules = game.rules;
  const kind = kindOf(rules) ?? "mnk";
  let rows = 0;
  let cols = 0;
  let squares = 0;
  let jumps: Jump[] = [];
  const k = rules?.kind;
  switch (k?.case) {
    case "mnk":
      rows = k.value.rows;
      cols = k.value.cols;
      break;
    case "connectFour":
      rows = k.value.rows ?? 6;
      cols = k.value.cols ?? 7;
      break;
    case "gomoku":
      rows = k.value.rows ?? 15;
      cols = k.value.cols ?? 15;
      break;
    case "wild":
      rows = k.value.rows ?? 3;
      cols = k.value.cols ?? 3;
      break;
    case "othello":
      rows = cols = k.value.size ?? 8;
      break;
    case "hex":
      rows = cols = k.value.size ?? 11;
      break;
    case "snakesLadders":
      squares = k.value.squares ?? 100;
      jumps = k.value.jumps;
      break;
    case "chess":
      rows = cols = 8;
      break;
  }
  const board = game.position?.board;
  if (board && board.rows > 0 && board.cols > 0) {
    rows = board.rows;
    cols = board.cols;
  }
  const tc = game.timeControl;
  return {
    kind,
    rows,
    cols,
    squares,
    jumps,
    seats: game.seats,
    timed: tc !== undefined,
    perMoveMs: durationMs(tc?.perMove),
    incrementMs: durationMs(tc?.increment),
    label: rulesLabel(rules),
  };
}

/** The contract's status names. */
export function statusName(s: GameStatus): string {
  switch (s) {
    case GameStatus.IN_PROGRESS:
      return "IN_PROGRESS";
    case GameStatus.WON:
      return "WON";
    case GameStatus.DRAWN:
      return "DRAWN";
    case GameStatus.NO_RESULT:
      return "NO_RESULT";
    default:
      return "UNSPECIFIED";
  }
}

export function statusOfOutcome(o: Outcome | undefined): GameStatus {
  switch (o?.kind.case) {
    case "win":
      return GameStatus.WON;
    case "draw":
      return GameStatus.DRAWN;
    case "noResult":
      return GameStatus.NO_RESULT;
    default:
      return GameStatus.IN_PROGRESS;
  }
}

export type RC = [number, number];

/**
 * Text as the page shows it: each character that acts on the text around it
 * instead of drawing (a control character, a bidirectional formatting
 * character such as the override in "admin\u{202e}gnp.exe", a line or
 * paragraph separator) written as its escape, `\u{202e}`, as `plylog show`
 * writes it. The server refuses them in new games; older games may hold them.
 */
export function visible(text: string): string {
  return text.replace(/[\p{Cc}\p{Bidi_Control}\u2028\u2029]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/** A seat's symbol (visible), or its number when it has none. */
export function symbolOf(seats: Seat[], seat: number): string {
  return visible(seats[seat]?.symbol || String(seat));
}

/** A seat's display name, or its player id when it has none (visible). */
export function seatName(s: Seat): string {
  return visible(s.displayName || s.playerId);
}

export function seatLabel(seats: Seat[], seat: number): string {
  const s = seats[seat];
  if (!s) return `seat ${seat}`;
  return `${symbolOf(seats, seat)} (${seatName(s)})`;
}

/** What it takes to revert one applied MovePlayed (MoveUndone). */
interface UndoRecord {
  sequence: bigint;
  seat: number;
  /** Cells changed, with the value they held before (undefined: empty). */
  cells: [number, number | undefined][];
  squares: number[];
  ply: number;
  seatToMove: number | undefined;
  status: GameStatus;
  outcome: Outcome | undefined;
  lastMove: RC | undefined;
  lastSquare: { seat: number; square: number } | undefined;
  clocks: Clocks | undefined;
}

/** How an event was applied. */
export type Applied =
  /** The state now is exactly the position after the event. */
  | "exact"
  /** The board is right but the clocks may not be: resync when convenient. */
  | "clocks"
  /** The state may be wrong: fetch the position after the event first. */
  | "inexact";

/** A game's state after some event, updated in place event by event. */
export class BoardState {
  readonly setup: Setup;
  cells = new Map<number, number>();
  squares: number[] = [];
  sequence = 0n;
  ply = 0;
  status: GameStatus = GameStatus.IN_PROGRESS;
  seatToMove: number | undefined = 0;
  outcome: Outcome | undefined;
  seatsOut = new Set<number>();
  clocks: Clocks | undefined;
  round = 0;
  lastMove: RC | undefined;
  /** Snakes and ladders: the last roll's seat and resting square. */
  lastSquare: { seat: number; square: number } | undefined;
  private undo: UndoRecord[] = [];
  private recording: [number, number | undefined][] | undefined;

  constructor(setup: Setup) {
    this.setup = setup;
  }

  get winLine(): RC[] {
    const o = this.outcome;
    if (o?.kind.case !== "win") return [];
    return o.kind.value.line.map((c) => [c.row, c.col] as RC);
  }

  /** Loads a position from the server; the undo history is kept. */
  loadPosition(pos: Position | undefined): void {
    if (!pos) return;
    this.cells.clear();
    const cols = this.setup.cols;
    for (const p of pos.board?.pieces ?? []) {
      this.cells.set(p.row * cols + p.col, p.seat);
    }
    for (const p of pos.chess?.pieces ?? []) {
      // Rank 8 is the top row; a cell holds the piece (see chessPiece).
      const col = p.square.charCodeAt(0) - 97;
      const row = 8 - Number(p.square.slice(1));
      const black = p.side === ChessSide.BLACK ? CHESS_BLACK : 0;
      this.cells.set(row * 8 + col, black + p.kind);
    }
    this.squares = [...pos.squares];
    while (this.squares.length < this.setup.seats.length && this.setup.kind === "snakes_ladders") {
      this.squares.push(0);
    }
    this.sequence = pos.sequence;
    this.ply = pos.ply;
    this.status = pos.status;
    this.seatToMove = pos.seatToMove;
    this.outcome = pos.outcome;
    this.seatsOut = new Set(pos.seatsOut);
    this.clocks = pos.clocks;
    this.round = pos.round;
  }

  /** Forgets what undo would need (after loading a position out of order). */
  clearHistory(): void {
    this.undo = [];
  }

  private set(key: number, seat: number | undefined): void {
    const before = this.cells.get(key);
    if (before === seat) return;
    this.recording?.push([key, before]);
    if (seat === undefined) this.cells.delete(key);
    else this.cells.set(key, seat);
  }

  private nextSeat(after: number): number | undefined {
    const n = this.setup.seats.length;
    for (let i = 1; i <= n; i++) {
      const s = (after + i) % n;
      if (!this.seatsOut.has(s)) return s;
    }
    return undefined;
  }

  /** Applies one event; the caller checks that it is the next in sequence. */
  apply(ev: GameEvent, recordedAtMs: number | undefined): Applied {
    const k = ev.kind;
    let result: Applied = "exact";
    switch (k.case) {
      case "movePlayed":
      case "moveRedone":
        result = this.applyMove(k.value, ev.sequence, recordedAtMs);
        break;
      case "moveUndone":
        result = this.applyUndo(k.value.seat, k.value.placement);
        break;
      case "turnPassed":
        this.seatToMove = this.nextSeat(k.value.seat);
        if (this.setup.timed) result = "inexact";
        break;
      case "gameEnded":
        this.outcome = k.value.outcome;
        this.status = statusOfOutcome(k.value.outcome);
        this.seatToMove = undefined;
        if (this.clocks) result = "clocks";
        break;
      case "seatOut":
        this.seatsOut.add(k.value.seat);
        if (this.seatToMove === k.value.seat) {
          this.seatToMove = this.nextSeat(k.value.seat);
        }
        result = "inexact";
        break;
      case "roundStarted":
        this.cells.clear();
        this.squares = this.squares.map(() => 0);
        this.ply = 0;
        this.status = GameStatus.IN_PROGRESS;
        this.outcome = undefined;
        this.seatToMove = k.value.first;
        this.seatsOut.clear();
        this.round = k.value.round;
        this.lastMove = undefined;
        this.lastSquare = undefined;
        this.undo = [];
        result = "inexact";
        break;
      case "gameCreated":
      case "seatTokenReissued":
      case "drawOffered":
      case "drawDeclined":
      case "takebackRequested":
      case "takebackDeclined":
      case "rematchRequested":
        break;
      case "timeExpired":
      case "seatAbsent":
      case "drawAccepted":
      case "takebackAccepted":
      default:
        // What follows is in the next events, but a resync costs little.
        result = "inexact";
        break;
    }
    this.sequence = ev.sequence;
    return result;
  }

  private applyMove(m: MovePlayed, sequence: bigint, atMs: number | undefined): Applied {
    const { kind, cols, rows } = this.setup;
    if (kind === "chess") {
      // A chess move can capture, castle or promote: read the position.
      this.ply = m.ply;
      this.undo.push({
        sequence,
        seat: m.seat,
        cells: [],
        squares: [],
        ply: this.ply,
        seatToMove: this.seatToMove,
        status: this.status,
        outcome: this.outcome,
        lastMove: undefined,
        lastSquare: undefined,
        clocks: this.clocks,
      });
      return "inexact";
    }
    const rec: UndoRecord = {
      sequence,
      seat: m.seat,
      cells: [],
      squares: [...this.squares],
      ply: this.ply,
      seatToMove: this.seatToMove,
      status: this.status,
      outcome: this.outcome,
      lastMove: this.lastMove,
      lastSquare: this.lastSquare,
      clocks: this.clocks,
    };
    this.recording = rec.cells;
    let result: Applied = "exact";
    const mv = m.move?.kind;
    const pl = m.placement;
    try {
      if (kind === "snakes_ladders") {
        const to = m.roll?.to ?? pl?.col ?? 0;
        while (this.squares.length <= m.seat) this.squares.push(0);
        this.squares[m.seat] = to;
        this.lastSquare = { seat: m.seat, square: to };
        this.lastMove = undefined;
      } else if (mv?.case === "pop" && pl) {
        // The bottom disc leaves; every disc above falls one row.
        const c = pl.col;
        for (let r = pl.row; r > 0; r--) {
          this.set(r * cols + c, this.cells.get((r - 1) * cols + c));
        }
        this.set(c, undefined);
        this.lastMove = [pl.row, pl.col];
      } else if (mv?.case === "swap" && pl) {
        this.set(pl.col * cols + pl.row, undefined);
        this.set(pl.row * cols + pl.col, m.seat);
        this.lastMove = [pl.row, pl.col];
      } else if (pl) {
        let piece = m.seat;
        if (kind === "wild" && mv?.case === "place" && mv.value.mark !== undefined) {
          piece = mv.value.mark;
        }
        if (pl.row < 0 || pl.row >= rows || pl.col < 0 || pl.col >= cols) {
          result = "inexact";
        } else {
          this.set(pl.row * cols + pl.col, piece);
        }
        for (const f of m.flipped) this.set(f.row * cols + f.col, m.seat);
        this.lastMove = [pl.row, pl.col];
      } else {
        result = "inexact";
      }
    } finally {
      this.recording = undefined;
    }
    this.ply = m.ply;
    if (m.outcome) {
      this.outcome = m.outcome;
      this.status = statusOfOutcome(m.outcome);
      this.seatToMove = undefined;
    } else {
      this.outcome = undefined;
      this.status = GameStatus.IN_PROGRESS;
      this.seatToMove = m.roll?.extraTurn ? m.seat : this.nextSeat(m.seat);
    }
    if (this.clocks && result === "exact") {
      this.clocks = advanceClocks(this.clocks, this.setup, m.seat, this.seatToMove, atMs);
      result = "clocks";
    }
    this.undo.push(rec);
    if (this.undo.length > 5000) this.undo.shift();
    return result;
  }

  private applyUndo(seat: number, placement: Cell | undefined): Applied {
    if (this.setup.kind === "chess") {
      this.undo.pop();
      return "inexact";
    }
    const rec = this.undo.pop();
    if (rec) {
      // Reverse order: a cell changed twice gets its oldest value back.
      for (let i = rec.cells.length - 1; i >= 0; i--) {
        const [key, before] = rec.cells[i];
        if (before === undefined) this.cells.delete(key);
        else this.cells.set(key, before);
      }
      this.squares = rec.squares;
      this.ply = rec.ply;
      this.status = GameStatus.IN_PROGRESS;
      this.outcome = undefined;
      this.seatToMove = seat;
      this.lastMove = rec.lastMove;
      this.lastSquare = rec.lastSquare;
      if (this.clocks) {
        this.clocks = rec.clocks;
        return "inexact";
      }
      return "exact";
    }
    // A move played before this view opened: simple placements are exact.
    const { kind, cols } = this.setup;
    const simple = kind === "mnk" || kind === "gomoku" || kind === "wild" || kind === "connect_four";
    this.ply = Math.max(0, this.ply - 1);
    this.status = GameStatus.IN_PROGRESS;
    this.outcome = undefined;
    this.seatToMove = seat;
    this.lastMove = undefined;
    this.lastSquare = undefined;
    if (placement && (simple || kind === "hex")) {
      this.cells.delete(placement.row * cols + placement.col);
    }
    // A Pop Out pop, an Othello flip, a Hex swap or a roll cannot be
    // reverted from the event alone; neither can a clock.
    const popOut = kind === "connect_four";
    return simple && !popOut && !this.clocks ? "exact" : "inexact";
  }

  /** The board as the server's Board.text draws it ("" past 1,024 cells). */
  text(): string {
    const { kind, rows, cols, seats } = this.setup;
    if (kind === "chess") {
      const lines: string[] = [];
      for (let r = 0; r < 8; r++) {
        let line = "";
        for (let c = 0; c < 8; c++) {
          const piece = chessPiece(this.cells.get(r * 8 + c));
          line += piece ? (piece.black ? piece.letter.toLowerCase() : piece.letter) : ".";
        }
        lines.push(line);
      }
      return lines.join("\n");
    }
    if (kind === "snakes_ladders") {
      return seats.map((_, i) => `${symbolOf(seats, i)}: ${this.squares[i] ?? 0}`).join("\n");
    }
    return boardText(rows, cols, seats, this.cells);
  }
}

/** A chess cell's value for a black piece: added to its ChessPieceKind. */
export const CHESS_BLACK = 8;

/** The chess piece a cell of a chess game holds: its FEN letter and side. */
export function chessPiece(value: number | undefined): { letter: string; black: boolean } | undefined {
  if (value === undefined) return undefined;
  const kind = value % CHESS_BLACK;
  const letter = ["", "P", "N", "B", "R", "Q", "K"][kind] ?? "";
  if (kind === ChessPieceKind.UNSPECIFIED || letter === "") return undefined;
  return { letter, black: value >= CHESS_BLACK };
}

export function boardText(
  rows: number,
  cols: number,
  seats: Seat[],
  cells: Map<number, number>,
): string {
  if (rows * cols > 1024 || rows * cols === 0) return "";
  const lines: string[] = [];
  for (let r = 0; r < rows; r++) {
    let line = "";
    for (let c = 0; c < cols; c++) {
      const s = cells.get(r * cols + c);
      line += s === undefined ? "." : symbolOf(seats, s);
    }
    lines.push(line);
  }
  return lines.join("\n");
}

/**
 * The clocks after `mover` moved at `atMs`: its clock loses the time since
 * the turn started and gains the increment; the next turn starts then.
 */
function advanceClocks(
  clocks: Clocks,
  setup: Setup,
  mover: number,
  next: number | undefined,
  atMs: number | undefined,
): Clocks {
  const started = timestampMs(clocks.turnStarted);
  if (atMs === undefined || started === undefined) return clocks;
  const remaining = clocks.remaining.map((d) => durationMs(d));
  if (remaining.length > mover) {
    remaining[mover] = Math.max(0, remaining[mover] - (atMs - started)) + setup.incrementMs;
  }
  let deadline: number | undefined;
  if (next !== undefined) {
    const limits: number[] = [];
    if (setup.perMoveMs > 0) limits.push(setup.perMoveMs);
    if (remaining.length > next) limits.push(remaining[next]);
    if (limits.length > 0) deadline = atMs + Math.min(...limits);
  }
  return {
    ...clocks,
    remaining: remaining.map(msToDuration),
    turnStarted: msToTimestamp(atMs),
    deadline: deadline === undefined ? undefined : msToTimestamp(deadline),
  };
}

function msToDuration(ms: number): Duration {
  return {
    $typeName: "google.protobuf.Duration",
    seconds: BigInt(Math.floor(ms / 1000)),
    nanos: (ms % 1000) * 1e6,
  };
}

function msToTimestamp(ms: number): Timestamp {
  return {
    $typeName: "google.protobuf.Timestamp",
    seconds: BigInt(Math.floor(ms / 1000)),
    nanos: (ms % 1000) * 1e6,
  };
}

/** Formats ms as m:ss.t (or h:mm:ss past an hour). */
export function formatClock(ms: number): string {
  const neg = ms < 0;
  ms = Math.max(0, ms);
  const totalS = Math.floor(ms / 1000);
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const s = totalS % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  const body =
    h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}.${Math.floor((ms % 1000) / 100)}`;
  return neg ? `0:00.0` : body;
}

/** One line describing an event, for the moves list. */
export function describeEvent(ev: GameEvent, seats: Seat[]): string {
  const k = ev.kind;
  const who = (s: number) => seatLabel(seats, s);
  switch (k.case) {
    case "gameCreated":
      return "game created";
    case "movePlayed":
    case "moveRedone": {
      const m = k.value;
      const verb = k.case === "moveRedone" ? "redoes" : "plays";
      let what = "";
      const mv = m.move?.kind;
      const pl = m.placement;
      switch (mv?.case) {
        case "place":
          what = pl ? `(${pl.row},${pl.col})` : "";
          if (mv.value.mark !== undefined) what += ` mark ${symbolOf(seats, mv.value.mark)}`;
          break;
        case "drop":
          what = `drop column ${mv.value.column}` + (pl ? ` → (${pl.row},${pl.col})` : "");
          break;
        case "pop":
          what = `pop column ${mv.value.column}`;
          break;
        case "swap":
          what = "swap" + (pl ? ` → (${pl.row},${pl.col})` : "");
          break;
        case "chess":
          what = m.chess?.san ?? mv.value.text;
          break;
        case "roll": {
          const r = m.roll;
          if (r) {
            what = `rolls ${r.dice.join("+")}: ${r.from} → ${r.to}`;
            if (r.jumps.length) what += ` (${r.jumps.map((j) => `${j.from}→${j.to}`).join(", ")})`;
            if (r.extraTurn) what += ", again";
          } else what = "rolls";
          break;
        }
      }
      if (m.flipped.length) what += `, flips ${m.flipped.length}`;
      const end = m.outcome ? ` — ${describeOutcome(m.outcome, seats)}` : "";
      const lead = mv?.case === "roll" ? "" : ` ${verb}`;
      return `${who(m.seat)}${lead} ${what}${end}`.replace(/\s+/g, " ").trim();
    }
    case "moveUndone":
      return `${who(k.value.seat)}'s move #${k.value.undoneSequence} undone`;
    case "turnPassed":
      return `${who(k.value.seat)} passes`;
    case "seatTokenReissued":
      return `${who(k.value.seat)}'s token re-issued`;
    case "timeExpired":
      return `${who(k.value.seat)} ran out of time`;
    case "seatOut":
      return `${who(k.value.seat)} is out`;
    case "gameEnded":
      return describeOutcome(k.value.outcome, seats);
    case "drawOffered":
      return `${who(k.value.seat)} offers a draw`;
    case "drawAccepted":
      return `${who(k.value.seat)} accepts the draw`;
    case "drawDeclined":
      return `${who(k.value.seat)} declines the draw`;
    case "takebackRequested":
      return `${who(k.value.seat)} asks for a takeback`;
    case "takebackAccepted":
      return `${who(k.value.seat)} accepts the takeback`;
    case "takebackDeclined":
      return `${who(k.value.seat)} declines the takeback`;
    case "rematchRequested":
      return `${who(k.value.seat)} asks for a rematch`;
    case "roundStarted":
      return `round ${k.value.round} starts, ${who(k.value.first)} first`;
    case "seatAbsent":
      return `${who(k.value.seat)} is away`;
    default:
      return "event";
  }
}

const REASONS: Record<number, string> = {
  1: "line completed",
  2: "board full",
  3: "repetition",
  4: "disc count",
  5: "race finished",
  6: "connection",
  7: "resignation",
  8: "timeout",
  9: "agreement",
  10: "aborted",
  11: "abandoned",
};

export function describeOutcome(o: Outcome | undefined, seats: Seat[]): string {
  if (!o) return "";
  const reason = REASONS[o.reason];
  const why = reason ? ` (${reason})` : "";
  switch (o.kind.case) {
    case "win":
      return `${seatLabel(seats, o.kind.value.seat)} won${why}`;
    case "draw":
      return `draw${why}`;
    case "noResult":
      return `no result${why}`;
    default:
      return "";
  }
}
