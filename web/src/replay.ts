// The replay view (#/games/<id>/replay[?sequence=N]): every page of
// GetReplay, then a scrubber over the steps; each step's position is drawn
// with the live view's renderer.

import { client, errorText } from "./api";
import { gameHref, h, setAttr, setText } from "./dom";
import type { ReplayStep } from "./gen/plylog/v1/game_service_pb";
import type { Game } from "./gen/plylog/v1/game_pb";
import {
  BoardState,
  type Setup,
  boardText,
  describeEvent,
  describeOutcome,
  seatLabel,
  setupOf,
  statusName,
  symbolOf,
  visible,
} from "./model";
import { boardPanel, sceneOf, seatsLegend } from "./panel";
import type { View } from "./view";

const STEPS_PER_SECOND = 4;

export function replayView(gameId: string, startSequence: bigint | undefined): View {
  const panel = boardPanel("replay-board");
  const kindEl = h("span", { class: "kind-label muted" });
  const seatsBox = h("div", { class: "seats-box" });
  const scrubber = h("input", { id: "scrubber", type: "range", min: "1", max: "1", value: "1", step: "1", disabled: true });
  const btn = (id: string, label: string, title: string) => h("button", { id, type: "button", title }, label);
  const first = btn("replay-first", "|◀", "first step");
  const back = btn("replay-back", "◀", "step back");
  const play = btn("replay-play", "▶ play", "play / pause");
  const forward = btn("replay-forward", "▶", "step forward");
  const last = btn("replay-last", "▶|", "last step");
  const jump = h("input", { id: "replay-jump", type: "number", min: "1", step: "1", "aria-label": "jump to sequence" });
  const position = h("span", { id: "replay-position", class: "muted" });
  const eventText = h("p", { id: "replay-event" });
  const turn = h("p", { id: "replay-turn" });
  const outcome = h("p", { id: "replay-outcome" });
  const text = h("pre", { id: "replay-board-text" });
  const info = h("p", { class: "muted", id: "replay-info" }, "loading…");
  const el = h(
    "section",
    { id: "replay", "data-game-id": gameId, "data-sequence": "0" },
    h(
      "div",
      { class: "view-head" },
      h("a", { href: "#/", class: "back" }, "← all games"),
      h("h2", {}, visible(gameId)),
      kindEl,
      h("span", { class: "tag" }, "replay"),
      h("a", { href: gameHref(gameId), id: "live-link", class: "button" }, "live view"),
    ),
    info,
    h(
      "div",
      { class: "controls" },
      first,
      back,
      play,
      forward,
      last,
      scrubber,
      h("label", { class: "jump" }, "sequence ", jump),
      position,
    ),
    h(
      "div",
      { class: "layout" },
      panel.el,
      h("aside", { class: "side" }, seatsBox, eventText, turn, outcome, h("h3", {}, "board"), text),
    ),
  );

  const abort = new AbortController();
  let steps: ReplayStep[] = [];
  let setup: Setup | undefined;
  let index = -1;
  let timer = 0;

  const stop = () => {
    if (timer) clearInterval(timer);
    timer = 0;
    setText(play, "▶ play");
  };

  const show = (i: number) => {
    if (!setup || steps.length === 0) return;
    i = Math.max(0, Math.min(steps.length - 1, i));
    index = i;
    const step = steps[i];
    const ev = step.event;
    const pos = step.position;
    const state = new BoardState(setup);
    state.loadPosition(pos);
    const mk = ev?.kind;
    if ((mk?.case === "movePlayed" || mk?.case === "moveRedone") && mk.value.placement) {
      if (setup.kind === "snakes_ladders") {
        state.lastSquare = { seat: mk.value.seat, square: mk.value.roll?.to ?? mk.value.placement.col };
      } else {
        state.lastMove = [mk.value.placement.row, mk.value.placement.col];
      }
    }
    panel.board.setScene(sceneOf(setup, state));
    const served = pos?.board?.text ?? [];
    let t: string;
    if (setup.kind === "chess") {
      t = state.text();
    } else if (setup.kind === "snakes_ladders") {
      t = setup.seats.map((_, s) => `${symbolOf(setup!.seats, s)}: ${state.squares[s] ?? 0}`).join("\n");
    } else if (served.length > 0) {
      t = served.join("\n");
    } else {
      t = boardText(setup.rows, setup.cols, setup.seats, state.cells);
    }
    setText(text, t);
    setText(eventText, ev ? `#${ev.sequence} ${describeEvent(ev, setup.seats)}` : "");
    const over = state.seatToMove === undefined || statusName(state.status) !== "IN_PROGRESS";
    setText(turn, over ? "game over" : `${seatLabel(setup.seats, state.seatToMove!)} to move`);
    setText(outcome, describeOutcome(state.outcome, setup.seats));
    const seq = ev?.sequence ?? pos?.sequence ?? BigInt(i + 1);
    scrubber.value = String(i + 1);
    if (document.activeElement !== jump) jump.value = String(seq);
    setText(position, `step ${i + 1} of ${steps.length}, ply ${state.ply}`);
    setAttr(el, "data-ply", String(state.ply));
    setAttr(el, "data-status", statusName(state.status));
    setAttr(el, "data-sequence", String(seq));
  };

  /** The index of the step with this sequence (or the nearest). */
  const indexOf = (seq: bigint): number => {
    let lo = 0;
    let hi = steps.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((steps[mid].event?.sequence ?? 0n) < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  first.addEventListener("click", () => (stop(), show(0)));
  back.addEventListener("click", () => (stop(), show(index - 1)));
  forward.addEventListener("click", () => (stop(), show(index + 1)));
  last.addEventListener("click", () => (stop(), show(steps.length - 1)));
  scrubber.addEventListener("input", () => (stop(), show(Number(scrubber.value) - 1)));
  const onJump = () => {
    // An emptied box is someone about to type: leave it be.
    if (jump.value.trim() === "") return;
    const n = Number(jump.value);
    if (!Number.isFinite(n) || steps.length === 0) return;
    stop();
    show(indexOf(BigInt(Math.max(1, Math.floor(n)))));
    jump.value = el.getAttribute("data-sequence") ?? "";
  };
  jump.addEventListener("change", onJump);
  jump.addEventListener("keydown", (e) => {
    if (e.key === "Enter") onJump();
  });
  play.addEventListener("click", () => {
    if (timer) {
      stop();
      return;
    }
    if (index >= steps.length - 1) show(0);
    setText(play, "pause");
    timer = window.setInterval(() => {
      if (index >= steps.length - 1) stop();
      else show(index + 1);
    }, 1000 / STEPS_PER_SECOND);
  });
  const controls = [first, back, play, forward, last, scrubber, jump];
  for (const c of controls) c.disabled = true;

  const load = async () => {
    let game: Game | undefined;
    let token = "";
    try {
      do {
        const res = await client.getReplay({ gameId, pageToken: token }, { signal: abort.signal });
        game ??= res.game;
        steps = steps.concat(res.steps);
        token = res.nextPageToken;
        setText(info, `loading… ${steps.length} steps`);
      } while (token && !abort.signal.aborted);
    } catch (e) {
      if (!abort.signal.aborted) {
        setText(info, `cannot load the replay: ${errorText(e)}`);
        info.classList.add("error");
      }
      return;
    }
    if (!game || abort.signal.aborted) return;
    setup = setupOf(game);
    setText(kindEl, setup.label);
    seatsBox.replaceChildren(seatsLegend(setup));
    setText(info, `${steps.length} events`);
    scrubber.max = String(Math.max(1, steps.length));
    if (steps.length > 0) {
      jump.min = String(steps[0].event?.sequence ?? 1n);
      jump.max = String(steps[steps.length - 1].event?.sequence ?? BigInt(steps.length));
    }
    for (const c of controls) c.disabled = false;
    show(startSequence === undefined ? 0 : indexOf(startSequence));
  };
  void load();

  return {
    el,
    title: `${gameId} replay`,
    destroy() {
      abort.abort();
      stop();
      panel.board.destroy();
    },
  };
}
