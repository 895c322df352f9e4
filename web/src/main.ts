// plylog's dashboard: hash routes to the game list, a live game and its
// replay.
//   #/                               the list of games
//   #/games/<id>                     the live view
//   #/games/<id>/replay[?sequence=N] the replay (at sequence N)

import { apiBaseUrl } from "./api";
import { h } from "./dom";
import { listView } from "./list";
import { liveView } from "./live";
import { replayView } from "./replay";
import type { View } from "./view";

let current: View | undefined;

function route(): View {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query = ""] = hash.split("?", 2);
  const params = new URLSearchParams(query);
  const m = /^\/games\/([^/]+)(\/replay)?\/?$/.exec(path);
  if (m) {
    const id = decodeURIComponent(m[1]);
    if (m[2]) {
      const seq = params.get("sequence");
      const n = seq !== null && /^\d+$/.test(seq) ? BigInt(seq) : undefined;
      return replayView(id, n);
    }
    return liveView(id);
  }
  return listView();
}

function navigate(): void {
  current?.destroy();
  current = route();
  document.getElementById("app")!.replaceChildren(current.el);
  document.title = `${current.title} · plylog`;
}

function init(): void {
  const api = new URLSearchParams(location.search).get("api");
  const header = document.getElementById("top");
  if (header && api) header.append(h("span", { class: "muted api" }, `api ${apiBaseUrl()}`));
  window.addEventListener("hashchange", navigate);
  navigate();
}

init();
