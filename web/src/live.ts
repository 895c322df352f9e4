// The live view of one game (#/games/<id>): GetGame for the latest position
// (sequence S), then one followed StreamEvents from S - 499 (or 1): the events
// up to S are only listed (the game's history; they are in the position
// already), each later one is applied to the board as it comes. An event that
// cannot be applied exactly (and the clocks of a timed game) is settled by
// GetGame at that sequence. A gap resubscribes; an error or the end of the
// stream reconnects with backoff (200 ms doubling to 2 s) from the last listed
// sequence + 1. A game that does not exist stops the page at once: no retry.

import { Code, ConnectError } from "@connectrpc/connect";
import { client, errorText, sleep } from "./api";
import { h, replayHref, setAttr, setText } from "./dom";
import type { Game, GameEvent } from "./gen/plylog/v1/game_pb";
import {
  BoardState,
  type RC,
  type Setup,
  describeEvent,
  describeOutcome,
  durationMs,
  formatClock,
  seatLabel,
  setupOf,
  statusName,
  symbolOf,
  timestampMs,
  visible,
} from "./model";
import { boardPanel, sceneOf, seatsLegend } from "./panel";
import type { View } from "./view";

/** The events listed: the last 500, history included; older ones are in the replay. */
const MAX_MOVES_IN_DOM = 500;
const RESYNC_MIN_MS = 300;

type Connection = "connecting" | "live" | "reconnecting" | "not-found";

/** What the badge says once the game is over, instead of the connection. */
const END_LABELS: Record<string, string> = { WON: "won", DRAWN: "drawn", NO_RESULT: "no result" };

const rcText = (rc: RC | undefined) => (rc ? `${rc[0]},${rc[1]}` : "");

export function liveView(gameId: string): View {
  const panel = boardPanel("board");
  const title = h("h2", {}, visible(gameId));
  const kindEl = h("span", { class: "kind-label muted" });
  const conn = h("span", { class: "conn", id: "connection" }, "connecting");
  const seatsBox = h("div", { class: "seats-box" });
  const turn = h("p", { id: "turn" });
  const outcome = h("p", { id: "outcome" });
  const clocks = h("div", { id: "clocks" });
  const boardText = h("pre", { id: "board-text" });
  const moves = h("ol", { id: "moves" });
  const olderLink = h("a", {}, "the replay");
  const older = h("p", { id: "moves-older", class: "muted", hidden: true });
  const error = h("p", { class: "error", id: "game-error" });
  const notFound = h("p", { id: "not-found", hidden: true });
  const replayLink = h("a", { href: replayHref(gameId), id: "replay-link", class: "button" }, "replay");
  const layout = h(
    "div",
    { class: "layout" },
    panel.el,
    h(
      "aside",
      { class: "side" },
      seatsBox,
      turn,
      outcome,
      clocks,
      h("h3", {}, "board"),
      boardText,
      h("h3", {}, "events"),
      older,
      moves,
    ),
  );
  const el = h(
    "section",
    {
      id: "game",
      "data-game-id": gameId,
      "data-sequence": "0",
      "data-ply": "0",
      "data-status": "",
      "data-seat-to-move": "",
      "data-connection": "connecting",
      "data-winning-line": "",
      "data-last-move": "",
    },
    h(
      "div",
      { class: "view-head" },
      h("a", { href: "#/", class: "back" }, "← all games"),
      title,
      kindEl,
      conn,
      replayLink,
    ),
    error,
    notFound,
    layout,
  );

  const abort = new AbortController();
  const signal = abort.signal;
  let setup: Setup | undefined;
  let state: BoardState | undefined;
  /** The last sequence applied to `state` and shown. */
  let applied = 0n;
  /** The last sequence listed in #moves; the stream resumes after it. */
  let lastListed = 0n;
  let connection: Connection = "connecting";
  let clockTimer = 0;
  let resyncTimer = 0;
  let lastResync = 0;

  /** The badge: the connection while the game is in play, its end once over. */
  const showBadge = () => {
    const end = state ? END_LABELS[statusName(state.status)] : undefined;
    const [text, cls] = end ? [end, "over"] : [connection, connection];
    setText(conn, text);
    setAttr(conn, "class", `conn conn-${cls}`);
    setAttr(conn, "title", end ? "the game is over" : "");
  };

  const setConnection = (c: Connection) => {
    connection = c;
    setAttr(el, "data-connection", c);
    showBadge();
  };

  /** No game has this id: say so, and nothing else (no badge, no board, no retry). */
  const showNotFound = () => {
    setConnection("not-found");
    abort.abort();
    clearInterval(clockTimer);
    setText(error, "");
    setText(notFound, `Game ${visible(gameId)} not found: no game has this id.`);
    notFound.hidden = false;
    conn.hidden = true;
    replayLink.hidden = true;
    layout.hidden = true;
  };

  const renderClocks = () => {
    const c = state?.clocks;
    if (!state || !setup || !c) {
      setText(clocks, "");
      return;
    }
    const now = Date.now();
    const started = timestampMs(c.turnStarted);
    const running = state.seatToMove;
    const parts: string[] = [];
    c.remaining.forEach((d, seat) => {
      let ms = durationMs(d);
      if (seat === running && started !== undefined) ms -= now - started;
      parts.push(`${seat === running ? "▶ " : ""}${symbolOf(setup!.seats, seat)} ${formatClock(ms)}`);
    });
    const deadline = timestampMs(c.deadline);
    if (deadline !== undefined && running !== undefined && (c.remaining.length === 0 || setup.perMoveMs > 0)) {
      parts.push(`move ${formatClock(deadline - now)}`);
    }
    setText(clocks, parts.join("   "));
  };

  /** Shows the state; data-sequence goes last. */
  const render = () => {
    if (!state || !setup) return;
    panel.board.setScene(sceneOf(setup, state));
    setText(boardText, state.text());
    const over = state.seatToMove === undefined || statusName(state.status) !== "IN_PROGRESS";
    setText(turn, over ? "game over" : `${seatLabel(setup.seats, state.seatToMove!)} to move`);
    setText(outcome, describeOutcome(state.outcome, setup.seats));
    renderClocks();
    for (const li of seatsBox.querySelectorAll<HTMLElement>("li[data-seat]")) {
      const seat = Number(li.dataset.seat);
      li.classList.toggle("to-move", seat === state.seatToMove);
      li.classList.toggle("out", state.seatsOut.has(seat));
    }
    setAttr(el, "data-ply", String(state.ply));
    setAttr(el, "data-status", statusName(state.status));
    setAttr(el, "data-seat-to-move", state.seatToMove === undefined ? "" : String(state.seatToMove));
    setAttr(el, "data-winning-line", state.winLine.map((rc) => rcText(rc)).join(";"));
    setAttr(el, "data-last-move", rcText(state.lastMove));
    showBadge();
    setAttr(el, "data-sequence", String(applied));
  };

  /** Lists one event; the history (up to `applied`) is scrolled to its end once listed. */
  const listEvent = (ev: GameEvent) => {
    if (ev.sequence <= lastListed || !setup) return;
    lastListed = ev.sequence;
    const history = ev.sequence < applied;
    const nearBottom = !history && moves.scrollTop + moves.clientHeight >= moves.scrollHeight - 8;
    moves.append(
      h("li", { "data-sequence": String(ev.sequence) }, h("span", { class: "seq" }, `#${ev.sequence}`), " ", describeEvent(ev, setup.seats)),
    );
    while (moves.childElementCount > MAX_MOVES_IN_DOM) moves.firstElementChild?.remove();
    const first = BigInt((moves.firstElementChild as HTMLElement).dataset.sequence!);
    if (first > 1n && older.hidden) {
      older.hidden = false;
      older.replaceChildren("Older events are in ", olderLink, ".");
    }
    if (first > 1n) setAttr(olderLink, "href", replayHref(gameId, first - 1n));
    if (nearBottom || ev.sequence === applied) moves.scrollTop = moves.scrollHeight;
  };

  /** The game at `sequence` (0: latest), retried with backoff until it comes. */
  const fetchGame = async (sequence: bigint): Promise<Game | undefined> => {
    let backoff = 200;
    for (;;) {
      if (signal.aborted) return undefined;
      try {
        const res = await client.getGame({ gameId, atSequence: sequence > 0n ? sequence : undefined }, { signal });
        setText(error, "");
        return res.game;
      } catch (e) {
        if (signal.aborted) return undefined;
        if (e instanceof ConnectError && e.code === Code.NotFound) {
          showNotFound();
          return undefined;
        }
        setText(error, `cannot read the game: ${errorText(e)}`);
        if (applied > 0n) setConnection("reconnecting");
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 2000);
      }
    }
  };

  /** Debounced GetGame at the applied sequence, for the clocks. */
  const scheduleResync = () => {
    if (resyncTimer) return;
    const wait = Math.max(0, lastResync + RESYNC_MIN_MS - Date.now());
    resyncTimer = window.setTimeout(async () => {
      lastResync = Date.now();
      const at = applied;
      let game: Game | undefined;
      try {
        game = (await client.getGame({ gameId, atSequence: at }, { signal })).game;
      } catch {
        game = undefined;
      }
      resyncTimer = 0;
      if (signal.aborted || !state) return;
      if (!game || applied !== at) {
        scheduleResync();
        return;
      }
      state.loadPosition(game.position);
      render();
    }, wait);
  };

  /**
   * Lists one streamed event, and applies it when it is after the position
   * shown; "gap" asks for a resubscription, "stop" ends the page's stream.
   */
  const onEvent = async (ev: GameEvent): Promise<"ok" | "gap" | "stop"> => {
    if (!state) return "ok";
    if (ev.sequence <= lastListed) return "ok";
    if (ev.sequence > lastListed + 1n) return "gap";
    if (ev.sequence <= applied) {
      // The history: already in the position the page opened with.
      listEvent(ev);
      return "ok";
    }
    const how = state.apply(ev, timestampMs(ev.recordedAt));
    if (how === "inexact") {
      const game = await fetchGame(ev.sequence);
      if (!game) return "stop";
      state.loadPosition(game.position);
    }
    applied = ev.sequence;
    listEvent(ev);
    render();
    if (how === "clocks") scheduleResync();
    return "ok";
  };

  const follow = async () => {
    let backoff = 200;
    while (!signal.aborted) {
      const stream = new AbortController();
      const stop = () => stream.abort();
      signal.addEventListener("abort", stop);
      let gap = false;
      try {
        const responses = client.streamEvents(
          { gameId, fromSequence: lastListed + 1n, follow: true },
          { signal: stream.signal },
        );
        for await (const res of responses) {
          backoff = 200;
          setConnection("live");
          setText(error, "");
          if (res.kind.case === "event") {
            const next = await onEvent(res.kind.value);
            if (next === "stop") return;
            if (next === "gap") {
              gap = true;
              break;
            }
          }
        }
      } catch (e) {
        if (e instanceof ConnectError && e.code === Code.NotFound) {
          showNotFound();
          return;
        }
        if (!signal.aborted) setText(error, `stream: ${errorText(e)}`);
      } finally {
        stream.abort();
        signal.removeEventListener("abort", stop);
      }
      if (signal.aborted) return;
      if (gap) continue;
      setConnection("reconnecting");
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, 2000);
    }
  };

  const start = async () => {
    const game = await fetchGame(0n);
    if (!game) return;
    setup = setupOf(game);
    state = new BoardState(setup);
    state.loadPosition(game.position);
    applied = state.sequence;
    // The history: the last events up to the position, listed as the stream brings them.
    lastListed = applied > BigInt(MAX_MOVES_IN_DOM) ? applied - BigInt(MAX_MOVES_IN_DOM) : 0n;
    setText(kindEl, setup.label);
    seatsBox.replaceChildren(seatsLegend(setup));
    render();
    clockTimer = window.setInterval(renderClocks, 100);
    await follow();
  };
  void start();

  return {
    el,
    title: gameId,
    destroy() {
      abort.abort();
      clearInterval(clockTimer);
      clearTimeout(resyncTimer);
      panel.board.destroy();
    },
  };
}
