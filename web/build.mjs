// Builds dist/ for the plylog binary to embed: exactly index.html, app.js
// and app.css. Deterministic (same inputs, same bytes): no source maps, no
// timestamps, a fixed target.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";

const dist = new URL("./dist/", import.meta.url);
mkdirSync(dist, { recursive: true });
for (const name of readdirSync(dist)) {
  rmSync(new URL(name, dist), { recursive: true, force: true });
}

await build({
  entryPoints: [new URL("./src/main.ts", import.meta.url).pathname],
  outfile: new URL("app.js", dist).pathname,
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  platform: "browser",
  sourcemap: false,
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
});

copyFileSync(new URL("./src/index.html", import.meta.url), new URL("index.html", dist));
copyFileSync(new URL("./src/app.css", import.meta.url), new URL("app.css", dist));
