// Small DOM helpers: no framework.

type Attrs = Record<string, string | number | boolean | undefined>;

/** Creates an element with attributes (class via "class") and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? "" : String(v));
  }
  el.append(...children);
  return el;
}

/** Sets text only when it changed (keeps WebDriver and layout calm). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

export function setAttr(el: Element, name: string, value: string): void {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

export function gameHref(id: string): string {
  return `#/games/${encodeURIComponent(id)}`;
}

export function replayHref(id: string, sequence?: bigint | number): string {
  return `${gameHref(id)}/replay${sequence === undefined ? "" : `?sequence=${sequence}`}`;
}

/** Local time as YYYY-MM-DD HH:MM:SS. */
export function formatTime(ms: number | undefined): string {
  if (ms === undefined) return "";
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** "5 s ago", "3 min ago", ... */
export function formatAgo(ms: number | undefined, now: number): string {
  if (ms === undefined) return "";
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}
