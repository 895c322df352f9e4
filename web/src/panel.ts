// The board area shared by the live and replay views: a zoom toolbar and the
// canvas, plus the scene a BoardState draws as.

import { h } from "./dom";
import { type BoardState, type Setup, seatName, symbolOf } from "./model";
import { BoardCanvas, type Scene } from "./render";

export interface BoardPanel {
  el: HTMLElement;
  board: BoardCanvas;
}

export function boardPanel(canvasId: string): BoardPanel {
  const canvas = h("canvas", { id: canvasId, "aria-label": "board" });
  const board = new BoardCanvas(canvas);
  const button = (label: string, title: string, f: () => void) => {
    const b = h("button", { type: "button", title, class: "icon" }, label);
    b.addEventListener("click", f);
    return b;
  };
  const el = h(
    "div",
    { class: "board-panel" },
    h(
      "div",
      { class: "toolbar" },
      button("−", "zoom out (-)", () => board.zoom(0.8)),
      button("+", "zoom in (+)", () => board.zoom(1.25)),
      button("fit", "show the whole board (0)", () => board.fit()),
      h("span", { class: "muted hint" }, "drag or arrow keys to pan, wheel to zoom"),
    ),
    h("div", { class: "canvas-wrap" }, canvas),
  );
  return { el, board };
}

export function sceneOf(setup: Setup, state: BoardState): Scene {
  return {
    kind: setup.kind,
    rows: setup.rows,
    cols: setup.cols,
    cells: state.cells,
    seats: setup.seats,
    lastMove: state.lastMove,
    winLine: state.winLine,
    squares: setup.squares,
    jumps: setup.jumps,
    positions: state.squares,
    lastSquare: state.lastSquare,
  };
}

/** The seats as a legend: colour, symbol, name, bot, out. */
export function seatsLegend(setup: Setup): HTMLElement {
  const ul = h("ul", { class: "seats" });
  setup.seats.forEach((s, i) => {
    ul.append(
      h(
        "li",
        { "data-seat": i },
        h("span", { class: `swatch k-${setup.kind} s${i % 8}` }),
        h("b", {}, symbolOf(setup.seats, i)),
        " ",
        seatName(s),
        s.bot ? h("span", { class: "tag" }, "bot") : "",
      ),
    );
  });
  return ul;
}
