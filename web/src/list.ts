// The list of games (#/): ListGames polled every second, newest first, with
// filters by kind, status and free text (id, player ids and names).

import { client, errorText } from "./api";
import { formatAgo, formatTime, gameHref, h, setAttr, setText } from "./dom";
import type { GameSummary } from "./gen/plylog/v1/game_service_pb";
import { KIND_NAMES, KINDS, kindOf, rulesLabel, seatName, statusName, symbolOf, timestampMs, visible } from "./model";
import type { View } from "./view";

const POLL_MS = 1000;
const STATUS_LABELS: Record<string, string> = {
  IN_PROGRESS: "in progress",
  WON: "won",
  DRAWN: "drawn",
  NO_RESULT: "no result",
};

/** The filters survive navigation to a game and back. */
const filters = { kind: "", status: "", text: "" };

export function listView(): View {
  const kindSel = h("select", { id: "filter-kind", "aria-label": "kind" }, h("option", { value: "" }, "all kinds"));
  for (const k of KINDS) kindSel.append(h("option", { value: k }, KIND_NAMES[k]));
  const statusSel = h("select", { id: "filter-status", "aria-label": "status" }, h("option", { value: "" }, "any status"));
  for (const s of Object.keys(STATUS_LABELS)) statusSel.append(h("option", { value: s }, STATUS_LABELS[s]));
  const text = h("input", { id: "filter-text", type: "search", placeholder: "game id or player", "aria-label": "search" });
  kindSel.value = filters.kind;
  statusSel.value = filters.status;
  text.value = filters.text;

  const tbody = h("tbody");
  const table = h(
    "table",
    { id: "games" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", {}, "game"),
        h("th", {}, "kind"),
        h("th", {}, "players"),
        h("th", {}, "status"),
        h("th", { class: "num" }, "events"),
        h("th", {}, "last activity"),
      ),
    ),
    tbody,
  );
  const info = h("p", { id: "list-info", class: "muted" }, "loading…");
  const el = h(
    "section",
    { id: "list" },
    h("div", { class: "filters" }, kindSel, statusSel, text, info),
    h("div", { class: "table-wrap" }, table),
  );

  let games: GameSummary[] = [];
  let loaded = false;
  let error = "";
  const rows = new Map<string, HTMLTableRowElement>();

  const matches = (g: GameSummary): boolean => {
    if (filters.kind && kindOf(g.rules) !== filters.kind) return false;
    if (filters.status && statusName(g.status) !== filters.status) return false;
    const q = filters.text.trim().toLowerCase();
    if (q) {
      const hay = [g.gameId, ...g.seats.flatMap((s) => [s.playerId, s.displayName])].join("\n").toLowerCase();
      if (!hay.includes(q)) return false;
    }
    return true;
  };

  const render = () => {
    const now = Date.now();
    const shown = games.filter(matches);
    const keep = new Set(shown.map((g) => g.gameId));
    for (const [id, tr] of rows) {
      if (!keep.has(id)) {
        tr.remove();
        rows.delete(id);
      }
    }
    let prev: Element | null = null;
    for (const g of shown) {
      let tr = rows.get(g.gameId);
      if (!tr) {
        tr = h(
          "tr",
          { "data-game-id": g.gameId },
          h("td", { class: "id" }, h("a", { href: gameHref(g.gameId) }, visible(g.gameId))),
          h("td", { class: "kind" }),
          h("td", { class: "players" }),
          h("td", { class: "status" }),
          h("td", { class: "sequence num" }),
          h("td", { class: "updated" }),
        );
        rows.set(g.gameId, tr);
      }
      const status = statusName(g.status);
      setAttr(tr, "data-status", status);
      const [, kindTd, playersTd, statusTd, seqTd, updTd] = Array.from(tr.cells);
      const kind = kindOf(g.rules) ?? "";
      setAttr(kindTd, "data-kind", kind);
      setText(kindTd, rulesLabel(g.rules));
      setText(playersTd, g.seats.map((s, i) => `${symbolOf(g.seats, i)} ${seatName(s)}${s.bot ? " (bot)" : ""}`).join(" · "));
      setText(statusTd, STATUS_LABELS[status] ?? status);
      setAttr(statusTd, "class", `status st-${status.toLowerCase()}`);
      setText(seqTd, String(g.lastSequence));
      const upd = timestampMs(g.updatedAt) ?? timestampMs(g.createdAt);
      setText(updTd, formatAgo(upd, now));
      setAttr(updTd, "title", formatTime(upd));
      setAttr(updTd, "data-updated-ms", upd === undefined ? "" : String(upd));
      // Keep DOM order = list order, moving only what is out of place.
      const want: Element | null = prev ? prev.nextElementSibling : tbody.firstElementChild;
      if (want !== tr) tbody.insertBefore(tr, want);
      prev = tr;
    }
    const total = games.length;
    setText(
      info,
      error
        ? `cannot list games: ${error}`
        : !loaded
          ? "loading…"
          : shown.length === total
            ? `${total} game${total === 1 ? "" : "s"}`
            : `${shown.length} of ${total} games`,
    );
    info.classList.toggle("error", error !== "");
  };

  const onFilter = () => {
    filters.kind = kindSel.value;
    filters.status = statusSel.value;
    filters.text = text.value;
    render();
  };
  kindSel.addEventListener("change", onFilter);
  statusSel.addEventListener("change", onFilter);
  text.addEventListener("input", onFilter);

  const abort = new AbortController();
  let timer = 0;
  const poll = async () => {
    try {
      const res = await client.listGames({ pageSize: 200, orderBy: "created_at desc" }, { signal: abort.signal });
      games = res.games;
      loaded = true;
      error = "";
    } catch (e) {
      if (abort.signal.aborted) return;
      error = errorText(e);
    }
    if (abort.signal.aborted) return;
    render();
    timer = window.setTimeout(poll, POLL_MS);
  };
  void poll();

  return {
    el,
    title: "games",
    destroy() {
      abort.abort();
      clearTimeout(timer);
    },
  };
}
