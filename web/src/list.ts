// The list of games (#/), live: the newest 200 games from ListGames, then
// every game's events from the feed (StreamAllEvents, followed from the
// feed's end as it was before the list was read), so games appear, move and
// end on the page as they commit, without polling. An event of a game at or
// below the sequence the list showed is skipped (the list read after the
// feed's start may include it); a game created appears at the top. When the
// stream breaks it resumes after the last checkpoint it received, with
// backoff (200 ms doubling to 2 s). Filters by kind, status and free text
// (id, player ids and names).

import { client, errorText, sleep } from "./api";
import { formatAgo, formatTime, gameHref, h, setAttr, setText } from "./dom";
import { type GameEvent, GameStatus } from "./gen/plylog/v1/game_pb";
import { type FeedEvent, type GameSummary, Lifecycle } from "./gen/plylog/v1/game_service_pb";
import { KIND_NAMES, KINDS, kindOf, rulesLabel, seatName, statusName, symbolOf, timestampMs, visible } from "./model";
import type { View } from "./view";

/** Games listed: the newest this many. */
const LIST_SIZE = 200;
/** How often "last activity" is redrawn (the ages change). */
const AGES_MS = 1000;
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

  /** The summary `event` leaves `game` with (the game listed already). */
  const applyTo = (game: GameSummary, event: GameEvent, feed: FeedEvent): GameSummary => {
    let status = game.status;
    switch (feed.lifecycle) {
      case Lifecycle.ENDED: {
        const kind = feed.outcome?.kind.case;
        status = kind === "win" ? GameStatus.WON : kind === "draw" ? GameStatus.DRAWN : GameStatus.NO_RESULT;
        break;
      }
      case Lifecycle.REOPENED:
      case Lifecycle.ROUND_STARTED:
        status = GameStatus.IN_PROGRESS;
        break;
    }
    return { ...game, status, lastSequence: event.sequence, updatedAt: event.recordedAt ?? game.updatedAt };
  };

  /** Takes in one event of the feed; whether the list changed. */
  const onFeedEvent = (feed: FeedEvent): boolean => {
    const event = feed.event;
    if (!event) return false;
    const at = games.findIndex((g) => g.gameId === event.gameId);
    if (at >= 0) {
      if (event.sequence <= games[at].lastSequence) return false;
      games[at] = applyTo(games[at], event, feed);
      return true;
    }
    if (event.kind.case !== "gameCreated") return false;
    const created = event.kind.value;
    games.unshift({
      $typeName: "plylog.v1.GameSummary",
      gameId: event.gameId,
      rules: created.rules,
      seats: created.seats,
      status: GameStatus.IN_PROGRESS,
      lastSequence: event.sequence,
      createdAt: event.recordedAt,
      updatedAt: event.recordedAt,
      labels: created.labels,
    });
    games.length = Math.min(games.length, LIST_SIZE);
    return true;
  };

  const abort = new AbortController();
  const signal = abort.signal;
  let ages = 0;
  const follow = async () => {
    /** Where the feed resumes: per cell, the last position received. */
    let after: bigint[] | undefined;
    let backoff = 200;
    while (!signal.aborted) {
      try {
        const responses = client.streamAllEvents(
          after ? { after, follow: true } : { fromEnd: true, follow: true },
          { signal },
        );
        for await (const res of responses) {
          backoff = 200;
          if (res.kind.case === "checkpoint") {
            const first = after === undefined;
            if (first) {
              // The feed starts here: the list is read after this, so it
              // misses nothing the feed does not send.
              games = (await client.listGames({ pageSize: LIST_SIZE, orderBy: "created_at desc" }, { signal })).games;
              loaded = true;
            }
            after = res.kind.value.positions;
            if (error) {
              error = "";
              render();
            } else if (first) render();
            continue;
          }
          if (res.kind.case !== "event") continue;
          const feed = res.kind.value;
          after = after ?? [];
          while (after.length <= feed.cell) after.push(0n);
          after[feed.cell] = feed.position;
          if (onFeedEvent(feed)) render();
        }
      } catch (e) {
        if (signal.aborted) return;
        error = errorText(e);
        render();
      }
      if (signal.aborted) return;
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, 2000);
    }
  };
  void follow();
  ages = window.setInterval(render, AGES_MS);

  return {
    el,
    title: "games",
    destroy() {
      abort.abort();
      clearInterval(ages);
    },
  };
}
