// The canvas board renderer shared by the live and the replay views. It draws
// only the visible part of the board (iterating either the visible cells or
// the pieces, whichever are fewer), so a 1000x1000 board stays responsive.
// Drag or arrow keys pan, the wheel zooms around the pointer; the canvas
// follows its container's size and the device pixel ratio.

import type { Jump, Seat } from "./gen/plylog/v1/game_pb";
import type { Kind, RC } from "./model";
import { chessPiece, symbolOf } from "./model";

/** What to draw. */
export interface Scene {
  kind: Kind;
  rows: number;
  cols: number;
  /** Occupied cells, keyed row * cols + col, valued by seat (or mark). */
  cells: Map<number, number>;
  seats: Seat[];
  lastMove: RC | undefined;
  winLine: RC[];
  /** Snakes and ladders. */
  squares: number;
  jumps: Jump[];
  positions: number[];
  lastSquare: { seat: number; square: number } | undefined;
}

const PALETTE = ["#1f5fbf", "#d0342c", "#2a8d3a", "#8e44ad", "#d68000", "#00838f", "#c2185b", "#5d4037"];
const HEX_COLORS = ["#d0342c", "#1f5fbf"];
const C4_COLORS = ["#e53935", "#f4c20d"];
const ROW_SQUARES = 10;
const SQRT3 = Math.sqrt(3);
const HEX_R = 1 / SQRT3; // hex radius for a hex one unit wide
/** Where the Hex rhombus's sides are, in cells beyond the outer cells' centres. */
const HEX_IN = -2 / 3;
/** How deep the Hex edges are, in cells. */
const HEX_EDGE = 0.3;

function seatColor(kind: Kind, seat: number): string {
  if (kind === "hex" && seat < 2) return HEX_COLORS[seat];
  if (kind === "connect_four" && seat < 2) return C4_COLORS[seat];
  return PALETTE[seat % PALETTE.length];
}

/** Stone colours of gomoku and Othello: black first, then white. */
function stoneColor(seat: number): string | undefined {
  return seat === 0 ? "#111" : seat === 1 ? "#f7f7f7" : undefined;
}

interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export class BoardCanvas {
  private readonly canvas: HTMLCanvasElement;
  private readonly ctx: CanvasRenderingContext2D;
  private scene: Scene | undefined;
  private geometryKey = "";
  /** CSS pixels per world unit, and the screen position of world (0,0). */
  private scale = 20;
  private ox = 0;
  private oy = 0;
  private cssW = 0;
  private cssH = 0;
  private frame = 0;
  private readonly resize: ResizeObserver;
  private drag: { id: number; x: number; y: number } | undefined;

  constructor(canvas: HTMLCanvasElement) {
    this.canvas = canvas;
    const ctx = canvas.getContext("2d");
    if (!ctx) throw new Error("no 2d canvas");
    this.ctx = ctx;
    this.resize = new ResizeObserver(() => this.measure());
    this.resize.observe(canvas);
    // A browser zoom changes the device pixel ratio, and fires resize.
    window.addEventListener("resize", this.onWindowResize);
    canvas.tabIndex = 0;
    canvas.addEventListener("pointerdown", (e) => {
      this.drag = { id: e.pointerId, x: e.clientX, y: e.clientY };
      try {
        canvas.setPointerCapture(e.pointerId);
      } catch {
        // A synthetic pointer cannot be captured; dragging still works.
      }
      canvas.classList.add("dragging");
    });
    canvas.addEventListener("pointermove", (e) => {
      if (!this.drag || this.drag.id !== e.pointerId) return;
      this.panBy(e.clientX - this.drag.x, e.clientY - this.drag.y);
      this.drag.x = e.clientX;
      this.drag.y = e.clientY;
    });
    const end = (e: PointerEvent) => {
      if (this.drag?.id === e.pointerId) this.drag = undefined;
      canvas.classList.remove("dragging");
    };
    canvas.addEventListener("pointerup", end);
    canvas.addEventListener("pointercancel", end);
    canvas.addEventListener(
      "wheel",
      (e) => {
        e.preventDefault();
        const r = canvas.getBoundingClientRect();
        if (e.ctrlKey || Math.abs(e.deltaY) >= Math.abs(e.deltaX)) {
          this.zoomAt(Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015)), e.clientX - r.left, e.clientY - r.top);
        } else {
          this.panBy(-e.deltaX, 0);
        }
      },
      { passive: false },
    );
    canvas.addEventListener("keydown", (e) => {
      const step = 60;
      const moves: Record<string, [number, number]> = {
        ArrowLeft: [step, 0],
        ArrowRight: [-step, 0],
        ArrowUp: [0, step],
        ArrowDown: [0, -step],
      };
      const m = moves[e.key];
      if (m) {
        e.preventDefault();
        this.panBy(m[0], m[1]);
      } else if (e.key === "+" || e.key === "=") this.zoom(1.25);
      else if (e.key === "-") this.zoom(0.8);
      else if (e.key === "0") this.fit();
    });
    this.measure();
  }

  private readonly onWindowResize = () => this.measure();

  destroy(): void {
    this.resize.disconnect();
    window.removeEventListener("resize", this.onWindowResize);
    cancelAnimationFrame(this.frame);
  }

  /** Shows `scene` now (drawn before this returns). */
  setScene(scene: Scene): void {
    const key = sceneKey(scene);
    this.scene = scene;
    this.measure();
    if (key !== this.geometryKey) {
      this.geometryKey = "";
      if (this.cssW > 0) {
        this.geometryKey = key;
        this.initialView();
      }
    }
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.draw();
  }

  zoom(f: number): void {
    this.zoomAt(f, this.cssW / 2, this.cssH / 2);
  }

  /** Fits the whole board in view. */
  fit(): void {
    const w = this.world();
    const m = 12;
    this.scale = Math.max(1e-3, Math.min((this.cssW - 2 * m) / w.w, (this.cssH - 2 * m) / w.h));
    this.ox = (this.cssW - w.w * this.scale) / 2 - w.x * this.scale;
    this.oy = (this.cssH - w.h * this.scale) / 2 - w.y * this.scale;
    this.request();
  }

  private initialView(): void {
    this.fit();
    const s = this.scene;
    if (!s || this.scale >= 8 || s.kind === "snakes_ladders") return;
    // A huge board: zoom in on the pieces' mean (or the centre) instead.
    let n = 0;
    let sr = 0;
    let sc = 0;
    for (const key of s.cells.keys()) {
      const r = Math.floor(key / s.cols);
      sr += r;
      sc += key - r * s.cols;
      n++;
    }
    let cr = s.rows / 2;
    let cc = s.cols / 2;
    if (n > 0) [cr, cc] = [sr / n + 0.5, sc / n + 0.5];
    else if (s.lastMove) [cr, cc] = [s.lastMove[0] + 0.5, s.lastMove[1] + 0.5];
    this.scale = 24;
    const [x, y] = s.kind === "hex" ? hexCenter(cr - 0.5, cc - 0.5) : [cc, cr];
    this.ox = this.cssW / 2 - x * this.scale;
    this.oy = this.cssH / 2 - y * this.scale;
    this.request();
  }

  private zoomAt(f: number, sx: number, sy: number): void {
    const w = this.world();
    const fitScale = Math.min(this.cssW / w.w, this.cssH / w.h) * 0.5;
    const next = Math.min(200, Math.max(Math.min(fitScale, 2), this.scale * f));
    const wx = (sx - this.ox) / this.scale;
    const wy = (sy - this.oy) / this.scale;
    this.scale = next;
    this.ox = sx - wx * next;
    this.oy = sy - wy * next;
    this.request();
  }

  private panBy(dx: number, dy: number): void {
    this.ox += dx;
    this.oy += dy;
    this.request();
  }

  private measure(): void {
    const r = this.canvas.getBoundingClientRect();
    const w = Math.round(r.width);
    const h = Math.round(r.height);
    if (w < 2 || h < 2) return; // not laid out yet
    const dpr = window.devicePixelRatio || 1;
    if (w === this.cssW && h === this.cssH && this.canvas.width === Math.round(w * dpr)) return;
    // Keep the centre where it was.
    if (this.cssW > 0) {
      this.ox += (w - this.cssW) / 2;
      this.oy += (h - this.cssH) / 2;
    }
    this.cssW = w;
    this.cssH = h;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    if (this.geometryKey === "" && this.scene) {
      this.geometryKey = sceneKey(this.scene);
      this.initialView();
    }
    this.request();
  }

  /** The board's extent in world units. */
  private world(): Rect {
    const s = this.scene;
    if (!s) return { x: 0, y: 0, w: 1, h: 1 };
    switch (s.kind) {
      case "hex": {
        // The rhombus with its coloured edges (at most HEX_EDGE wide at the fitted scale).
        const lo = HEX_IN - HEX_EDGE;
        const [x0] = hexCenter(lo, lo);
        const [x1] = hexCenter(s.rows - 1 - lo, s.cols - 1 - lo);
        const [, y0] = hexCenter(lo, 0);
        const [, y1] = hexCenter(s.rows - 1 - lo, 0);
        return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
      }
      case "snakes_ladders": {
        const rows = Math.ceil(s.squares / ROW_SQUARES);
        return { x: 0, y: 0, w: ROW_SQUARES, h: rows + 1.2 };
      }
      default:
        return { x: 0, y: 0, w: Math.max(1, s.cols), h: Math.max(1, s.rows) };
    }
  }

  private request(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  /** Draws now (also used by tests through rAF). */
  draw(): void {
    const { ctx, canvas } = this;
    if (this.cssW === 0) return;
    // Where the world is on the canvas, for tests that check what is drawn where.
    const view = `${this.scale},${this.ox},${this.oy}`;
    if (canvas.dataset.view !== view) canvas.dataset.view = view;
    const dpr = canvas.width / this.cssW;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = "#f4f5f7";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    const s = this.scene;
    if (!s) return;
    ctx.setTransform(dpr * this.scale, 0, 0, dpr * this.scale, dpr * this.ox, dpr * this.oy);
    const visibleRect: Rect = {
      x: -this.ox / this.scale,
      y: -this.oy / this.scale,
      w: this.cssW / this.scale,
      h: this.cssH / this.scale,
    };
    switch (s.kind) {
      case "hex":
        this.drawHex(s, visibleRect);
        break;
      case "snakes_ladders":
        this.drawRace(s, visibleRect);
        break;
      default:
        this.drawGrid(s, visibleRect);
    }
  }

  /** One world unit in CSS pixels. */
  private get px(): number {
    return 1 / this.scale;
  }

  /** Calls f for each occupied cell within rows r0..r1, cols c0..c1 (exclusive). */
  private eachPiece(
    s: Scene,
    r0: number,
    r1: number,
    c0: number,
    c1: number,
    f: (r: number, c: number, seat: number) => void,
  ): void {
    const visible = (r1 - r0) * (c1 - c0);
    if (visible <= s.cells.size * 2) {
      for (let r = r0; r < r1; r++) {
        const base = r * s.cols;
        for (let c = c0; c < c1; c++) {
          const seat = s.cells.get(base + c);
          if (seat !== undefined) f(r, c, seat);
        }
      }
    } else {
      for (const [key, seat] of s.cells) {
        const r = Math.floor(key / s.cols);
        const c = key - r * s.cols;
        if (r >= r0 && r < r1 && c >= c0 && c < c1) f(r, c, seat);
      }
    }
  }

  private drawGrid(s: Scene, v: Rect): void {
    const { ctx } = this;
    const r0 = Math.max(0, Math.floor(v.y));
    const r1 = Math.min(s.rows, Math.ceil(v.y + v.h));
    const c0 = Math.max(0, Math.floor(v.x));
    const c1 = Math.min(s.cols, Math.ceil(v.x + v.w));
    if (r0 >= r1 || c0 >= c1) return;
    const px = this.px;
    const kind = s.kind;
    const bg =
      kind === "othello" ? "#2e7d32" : kind === "gomoku" ? "#e2bd72" : kind === "connect_four" ? "#1e4fb4" : "#fff";
    ctx.fillStyle = bg;
    ctx.fillRect(c0, r0, c1 - c0, r1 - r0);
    if (kind === "chess") {
      // a1 (bottom left) is a dark square.
      ctx.fillStyle = "#c8a27c";
      for (let r = r0; r < r1; r++) {
        for (let c = c0; c < c1; c++) if ((r + c) % 2 === 1) ctx.fillRect(c, r, 1, 1);
      }
    }

    const detailed = this.scale >= 5;
    // Grid lines.
    if (detailed && kind !== "connect_four") {
      ctx.beginPath();
      if (kind === "gomoku") {
        // Go style: lines through the cell centres.
        for (let c = c0; c < c1; c++) {
          ctx.moveTo(c + 0.5, Math.max(r0, 0) + (r0 === 0 ? 0.5 : 0));
          ctx.lineTo(c + 0.5, r1 - (r1 === s.rows ? 0.5 : 0));
        }
        for (let r = r0; r < r1; r++) {
          ctx.moveTo(c0 + (c0 === 0 ? 0.5 : 0), r + 0.5);
          ctx.lineTo(c1 - (c1 === s.cols ? 0.5 : 0), r + 0.5);
        }
        ctx.strokeStyle = "#5a4320";
      } else {
        for (let c = c0; c <= c1; c++) {
          ctx.moveTo(c, r0);
          ctx.lineTo(c, r1);
        }
        for (let r = r0; r <= r1; r++) {
          ctx.moveTo(c0, r);
          ctx.lineTo(c1, r);
        }
        ctx.strokeStyle = kind === "othello" ? "#103d14" : "#c9ced6";
      }
      ctx.lineWidth = Math.max(px, 0.02);
      ctx.stroke();
    }
    // Connect Four holes.
    if (kind === "connect_four" && detailed) {
      ctx.fillStyle = "#f4f5f7";
      ctx.beginPath();
      for (let r = r0; r < r1; r++) {
        for (let c = c0; c < c1; c++) {
          if (s.cells.has(r * s.cols + c)) continue;
          ctx.moveTo(c + 0.88, r + 0.5);
          ctx.arc(c + 0.5, r + 0.5, 0.38, 0, 2 * Math.PI);
        }
      }
      ctx.fill();
    }
    // Pieces.
    const last = s.lastMove;
    const win = new Set(s.winLine.map(([r, c]) => r * s.cols + c));
    if (win.size && detailed) {
      ctx.fillStyle = "rgba(255, 214, 0, 0.45)";
      for (const [r, c] of s.winLine) ctx.fillRect(c, r, 1, 1);
    }
    if (!detailed) {
      // Tiny cells: one filled square per piece, at least 3 pixels wide.
      const dot = Math.max(1, 3 * px);
      this.eachPiece(s, r0, r1, c0, c1, (r, c, seat) => {
        const stone = kind === "gomoku" || kind === "othello" ? stoneColor(seat) : undefined;
        ctx.fillStyle = stone ?? seatColor(kind, seat);
        ctx.fillRect(c + 0.5 - dot / 2, r + 0.5 - dot / 2, dot, dot);
      });
    } else if (kind === "chess") {
      // Solid glyphs (♚♛♜♝♞♟), white with a dark outline for White.
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.font = `0.8px "DejaVu Sans", "Segoe UI Symbol", system-ui, sans-serif`;
      this.eachPiece(s, r0, r1, c0, c1, (r, c, value) => {
        const piece = chessPiece(value);
        if (!piece) return;
        const glyph = String.fromCodePoint(0x265a + "KQRBNP".indexOf(piece.letter));
        ctx.lineWidth = Math.max(px, 0.04);
        ctx.strokeStyle = piece.black ? "#000" : "#333";
        ctx.fillStyle = piece.black ? "#111" : "#fafafa";
        ctx.fillText(glyph, c + 0.5, r + 0.55, 0.9);
        ctx.strokeText(glyph, c + 0.5, r + 0.55, 0.9);
      });
    } else if (kind === "mnk" || kind === "wild") {
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      this.eachPiece(s, r0, r1, c0, c1, (r, c, seat) => {
        const sym = symbolOf(s.seats, seat);
        const size = sym.length <= 1 ? 0.72 : Math.max(0.3, 0.9 / sym.length);
        ctx.font = `600 ${size}px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif`;
        ctx.fillStyle = seatColor(kind, seat);
        ctx.fillText(sym, c + 0.5, r + 0.54, 0.9);
      });
    } else {
      this.eachPiece(s, r0, r1, c0, c1, (r, c, seat) => {
        const stone = kind === "gomoku" || kind === "othello" ? stoneColor(seat) : undefined;
        ctx.beginPath();
        ctx.arc(c + 0.5, r + 0.5, kind === "connect_four" ? 0.4 : 0.42, 0, 2 * Math.PI);
        ctx.fillStyle = stone ?? seatColor(kind, seat);
        ctx.fill();
        if (stone || kind === "connect_four") {
          ctx.lineWidth = Math.max(px, 0.03);
          ctx.strokeStyle = kind === "connect_four" ? "rgba(0,0,0,0.25)" : "#333";
          ctx.stroke();
        }
        if (!stone && kind !== "connect_four" && this.scale >= 14) {
          const sym = symbolOf(s.seats, seat);
          ctx.fillStyle = "#fff";
          ctx.textAlign = "center";
          ctx.textBaseline = "middle";
          ctx.font = `600 ${Math.max(0.25, 0.5 / Math.max(1, sym.length * 0.6))}px system-ui, sans-serif`;
          ctx.fillText(sym, c + 0.5, r + 0.52, 0.8);
        }
      });
    }
    // Last move.
    if (last) {
      ctx.lineWidth = Math.max(2 * px, 0.08);
      ctx.strokeStyle = "#ff7a00";
      const inset = Math.min(0.1, 2 * px);
      ctx.strokeRect(last[1] + inset, last[0] + inset, 1 - 2 * inset, 1 - 2 * inset);
    }
    // Winning line.
    if (s.winLine.length >= 2) {
      const [a, b] = [s.winLine[0], s.winLine[s.winLine.length - 1]];
      ctx.beginPath();
      ctx.moveTo(a[1] + 0.5, a[0] + 0.5);
      ctx.lineTo(b[1] + 0.5, b[0] + 0.5);
      ctx.lineCap = "round";
      ctx.lineWidth = Math.max(3 * px, 0.14);
      ctx.strokeStyle = "rgba(230, 120, 0, 0.85)";
      ctx.stroke();
      ctx.lineCap = "butt";
    }
    // Border.
    ctx.lineWidth = 2 * px;
    ctx.strokeStyle = "#667";
    ctx.strokeRect(0, 0, s.cols, s.rows);
  }

  private drawHex(s: Scene, v: Rect): void {
    const { ctx } = this;
    const px = this.px;
    const rowH = 1.5 * HEX_R;
    const r0 = Math.max(0, Math.floor((v.y - 2 * HEX_R) / rowH));
    const r1 = Math.min(s.rows, Math.ceil((v.y + v.h) / rowH) + 1);
    // The rhombus, as cell coordinates through hexCenter (an affine map, so
    // lines stay lines): its sides r = c = HEX_IN, r = rows - 1 - HEX_IN and
    // c = cols - 1 - HEX_IN touch the outermost corner of every outer cell.
    const top = HEX_IN;
    const bottom = s.rows - 1 - HEX_IN;
    const left = HEX_IN;
    const right = s.cols - 1 - HEX_IN;
    const polygon = (points: [number, number][], color: string) => {
      ctx.beginPath();
      for (const [r, c] of points) {
        const [x, y] = hexCenter(r, c);
        ctx.lineTo(x, y);
      }
      ctx.closePath();
      ctx.fillStyle = color;
      ctx.fill();
    };
    polygon(
      [
        [top, left],
        [top, right],
        [bottom, right],
        [bottom, left],
      ],
      "#f3ead7",
    );
    // The edges, bands along the sides split on the corners' diagonals:
    // seat 0 joins top and bottom, seat 1 left and right (OpenSpiel's hex).
    // A band is HEX_EDGE cells deep, and at least 6 CSS pixels.
    const e = Math.max(HEX_EDGE, (6 * px) / (1.5 * HEX_R));
    polygon(
      [
        [top, left],
        [top, right],
        [top - e, right + e],
        [top - e, left - e],
      ],
      HEX_COLORS[0],
    );
    polygon(
      [
        [bottom, left],
        [bottom, right],
        [bottom + e, right + e],
        [bottom + e, left - e],
      ],
      HEX_COLORS[0],
    );
    polygon(
      [
        [top, left],
        [bottom, left],
        [bottom + e, left - e],
        [top - e, left - e],
      ],
      HEX_COLORS[1],
    );
    polygon(
      [
        [top, right],
        [bottom, right],
        [bottom + e, right + e],
        [top - e, right + e],
      ],
      HEX_COLORS[1],
    );

    const detailed = this.scale >= 8;
    const colRange = (r: number): [number, number] => [
      Math.max(0, Math.floor(v.x - r / 2 - 1)),
      Math.min(s.cols, Math.ceil(v.x + v.w - r / 2) + 1),
    ];
    if (detailed) {
      ctx.beginPath();
      for (let r = r0; r < r1; r++) {
        const [c0, c1] = colRange(r);
        for (let c = c0; c < c1; c++) hexPath(ctx, r, c, 1);
      }
      ctx.strokeStyle = "#b9a77f";
      ctx.lineWidth = Math.max(px, 0.03);
      ctx.stroke();
    }
    // Pieces: rows are cheap to bound, columns per row.
    const visible = (r1 - r0) * Math.min(s.cols, Math.ceil(v.w) + 2);
    const drawPiece = (r: number, c: number, seat: number) => {
      const [x, y] = hexCenter(r, c);
      ctx.fillStyle = seatColor("hex", seat);
      if (detailed) {
        ctx.beginPath();
        ctx.arc(x, y, 0.36, 0, 2 * Math.PI);
        ctx.fill();
      } else {
        const dot = Math.max(1, 3 * px);
        ctx.fillRect(x - dot / 2, y - dot / 2, dot, dot);
      }
    };
    if (visible <= s.cells.size * 2) {
      for (let r = r0; r < r1; r++) {
        const [c0, c1] = colRange(r);
        for (let c = c0; c < c1; c++) {
          const seat = s.cells.get(r * s.cols + c);
          if (seat !== undefined) drawPiece(r, c, seat);
        }
      }
    } else {
      for (const [key, seat] of s.cells) {
        const r = Math.floor(key / s.cols);
        if (r < r0 || r >= r1) continue;
        const c = key - r * s.cols;
        const [c0, c1] = colRange(r);
        if (c >= c0 && c < c1) drawPiece(r, c, seat);
      }
    }
    if (s.lastMove) {
      ctx.beginPath();
      hexPath(ctx, s.lastMove[0], s.lastMove[1], 0.92);
      ctx.strokeStyle = "#ff7a00";
      ctx.lineWidth = Math.max(2 * px, 0.08);
      ctx.stroke();
    }
    if (s.winLine.length) {
      ctx.beginPath();
      s.winLine.forEach(([r, c], i) => {
        const [x, y] = hexCenter(r, c);
        if (i === 0) ctx.moveTo(x, y);
        else ctx.lineTo(x, y);
      });
      ctx.strokeStyle = "rgba(230, 120, 0, 0.85)";
      ctx.lineWidth = Math.max(3 * px, 0.12);
      ctx.stroke();
    }
  }

  private drawRace(s: Scene, v: Rect): void {
    void v; // at most 1,000 squares: draw them all
    const { ctx } = this;
    const px = this.px;
    const rows = Math.ceil(s.squares / ROW_SQUARES);
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    for (let sq = 1; sq <= s.squares; sq++) {
      const [x, y] = squareCell(sq, rows);
      ctx.fillStyle = (x + y) % 2 === 0 ? "#fbf6e9" : "#efe4c8";
      if (sq === s.squares) ctx.fillStyle = "#ffe08a";
      ctx.fillRect(x, y, 1, 1);
      if (this.scale >= 14) {
        ctx.fillStyle = "#6b5b3a";
        ctx.font = `${0.24}px system-ui, sans-serif`;
        ctx.fillText(String(sq), x + 0.06, y + 0.06);
      }
    }
    ctx.lineWidth = Math.max(px, 0.02);
    ctx.strokeStyle = "#c9b88e";
    ctx.strokeRect(0, 0, ROW_SQUARES, rows);
    // Start area below the board.
    ctx.fillStyle = "#e9ecef";
    ctx.fillRect(0, rows + 0.2, ROW_SQUARES, 1);
    if (this.scale >= 10) {
      ctx.fillStyle = "#555";
      ctx.font = `${0.3}px system-ui, sans-serif`;
      ctx.textBaseline = "middle";
      ctx.fillText("start", 0.1, rows + 0.7);
    }
    // Jumps.
    ctx.lineCap = "round";
    for (const j of s.jumps) {
      const [fx, fy] = squareCell(j.from, rows);
      const [tx, ty] = squareCell(j.to, rows);
      const a = [fx + 0.5, fy + 0.5];
      const b = [tx + 0.5, ty + 0.5];
      const up = j.to > j.from;
      ctx.beginPath();
      if (up) {
        // A ladder: two rails.
        const dx = b[0] - a[0];
        const dy = b[1] - a[1];
        const len = Math.hypot(dx, dy) || 1;
        const nx = (-dy / len) * 0.12;
        const ny = (dx / len) * 0.12;
        ctx.moveTo(a[0] + nx, a[1] + ny);
        ctx.lineTo(b[0] + nx, b[1] + ny);
        ctx.moveTo(a[0] - nx, a[1] - ny);
        ctx.lineTo(b[0] - nx, b[1] - ny);
        ctx.strokeStyle = "rgba(46, 125, 50, 0.85)";
        ctx.lineWidth = Math.max(2 * px, 0.05);
      } else {
        // A snake: a curve from head to tail.
        const mx = (a[0] + b[0]) / 2 + (b[1] - a[1]) * 0.15;
        const my = (a[1] + b[1]) / 2 - (b[0] - a[0]) * 0.15;
        ctx.moveTo(a[0], a[1]);
        ctx.quadraticCurveTo(mx, my, b[0], b[1]);
        ctx.strokeStyle = "rgba(198, 40, 40, 0.8)";
        ctx.lineWidth = Math.max(3 * px, 0.1);
      }
      ctx.stroke();
      if (!up) {
        ctx.beginPath();
        ctx.arc(a[0], a[1], 0.1, 0, 2 * Math.PI);
        ctx.fillStyle = "rgba(198, 40, 40, 0.95)";
        ctx.fill();
      }
    }
    ctx.lineCap = "butt";
    // Last roll.
    if (s.lastSquare && s.lastSquare.square > 0) {
      const [x, y] = squareCell(s.lastSquare.square, rows);
      ctx.strokeStyle = "#ff7a00";
      ctx.lineWidth = Math.max(2 * px, 0.06);
      ctx.strokeRect(x + 0.04, y + 0.04, 0.92, 0.92);
    }
    // Tokens, spread within a square by seat.
    const n = Math.max(1, s.seats.length);
    const per = Math.ceil(Math.sqrt(n));
    const rad = Math.min(0.22, 0.42 / per);
    s.positions.forEach((sq, seat) => {
      let x: number;
      let y: number;
      if (sq <= 0) {
        x = 1.2 + seat * 0.6;
        y = rows + 0.2;
        if (x > ROW_SQUARES - 0.5) x = ROW_SQUARES - 0.5;
        y += 0.5;
      } else {
        const [cx, cy] = squareCell(Math.min(sq, s.squares), rows);
        const i = seat % (per * per);
        x = cx + 0.05 + (0.9 / per) * ((i % per) + 0.5);
        y = cy + 0.12 + (0.85 / per) * (Math.floor(i / per) + 0.5);
      }
      ctx.beginPath();
      ctx.arc(x, y, rad, 0, 2 * Math.PI);
      ctx.fillStyle = seatColor("snakes_ladders", seat);
      ctx.fill();
      ctx.lineWidth = Math.max(px, 0.02);
      ctx.strokeStyle = "#fff";
      ctx.stroke();
      if (this.scale * rad >= 6) {
        const sym = symbolOf(s.seats, seat);
        ctx.fillStyle = "#fff";
        ctx.textAlign = "center";
        ctx.textBaseline = "middle";
        ctx.font = `600 ${rad * (sym.length > 1 ? 0.9 : 1.2)}px system-ui, sans-serif`;
        ctx.fillText(sym, x, y + rad * 0.06, rad * 1.8);
      }
    });
  }
}

function sceneKey(s: Scene): string {
  return `${s.kind}:${s.rows}x${s.cols}:${s.squares}`;
}

/** The centre of hex cell (r, c) in world units (hexes one unit wide). */
function hexCenter(r: number, c: number): [number, number] {
  return [c + r / 2 + 0.5, r * 1.5 * HEX_R + HEX_R];
}

function hexPath(ctx: CanvasRenderingContext2D, r: number, c: number, k: number): void {
  const [x, y] = hexCenter(r, c);
  const R = HEX_R * k;
  for (let i = 0; i < 6; i++) {
    const a = Math.PI / 6 + (i * Math.PI) / 3;
    const px = x + R * Math.cos(a);
    const py = y + R * Math.sin(a);
    if (i === 0) ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  }
  ctx.closePath();
}

/** The top-left corner of a race square: boustrophedon, square 1 bottom-left. */
function squareCell(square: number, rows: number): [number, number] {
  const i = square - 1;
  const fromBottom = Math.floor(i / ROW_SQUARES);
  const along = i % ROW_SQUARES;
  const x = fromBottom % 2 === 0 ? along : ROW_SQUARES - 1 - along;
  return [x, rows - 1 - fromBottom];
}
