// Import rules of crates/web/src (after Perfetto's tools/check_imports): each top-level folder is a
// layer that may use only the layers listed for it, and feature folders never use each other;
// only app.rs, tab_body.rs (each tab's body, a function of its own) and rehearse.rs (the first
// render rehearsed offscreen) compose features. Reads every `crate::…` / `super::…` path
// in the sources (comments stripped) and fails naming the file, the line and the rule broken.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../crates/web/src", import.meta.url));
const FEATURES = ["views", "timeline", "flame", "memory", "ranks", "roofline", "compare", "embed", "trend"];
const BASE = ["platform", "session", "load", "widgets"];
/** Layer -> the layers it may import (besides itself). */
export const ALLOWED = {
  platform: [],
  session: ["platform"],
  load: ["platform", "session"],
  widgets: ["platform"],
  ...Object.fromEntries(FEATURES.map((f) => [f, ["platform", "session", "load", "widgets"]])),
  tab_body: [...BASE, ...FEATURES],
  rehearse: [...BASE, ...FEATURES, "tab_body"],
  app: [...BASE, ...FEATURES, "rehearse", "tab_body"],
  lib: [...BASE, ...FEATURES, "app", "rehearse", "tab_body"],
  main: [...BASE, ...FEATURES, "app"],
};

/** Top-level modules `file` (relative to src, '/'-separated) imports, with line numbers. */
export function importsOf(file, text) {
  const parts = file.replace(/\.rs$/, "").split("/");
  // The module path of the file's parent (for `super::`): foo/bar.rs -> [foo]; foo/mod.rs -> [].
  const self = parts.at(-1) === "mod" ? parts.slice(0, -1) : parts;
  const out = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/\/\/.*$/, "");
    for (const m of line.matchAll(/\b(crate|super)((?:::super)*)::([A-Za-z_][A-Za-z0-9_]*|\{[^}]*\})/g)) {
      const ups = m[1] === "super" ? 1 + (m[2].match(/super/g) || []).length : 0;
      const base = m[1] === "crate" ? [] : self.slice(0, Math.max(0, self.length - ups));
      const heads = m[3].startsWith("{") ? m[3].slice(1, -1).split(",").map((s) => s.trim().split("::")[0]) : [m[3]];
      for (const h of heads.filter((h) => h && h !== "self")) {
        out.push({ target: base.length ? base[0] : h, line: i + 1 });
      }
    }
  });
  return out;
}

/** Every broken rule in one file, as "file:line: layer -> target". */
export function violations(file, text) {
  const layer = file.split("/")[0].replace(/\.rs$/, "");
  const allowed = ALLOWED[layer];
  if (!allowed) return [`${file}: '${layer}' is in no layer: add it to ALLOWED in tests/arch/imports.test.mjs`];
  return importsOf(file, text)
    .filter(({ target }) => target !== layer && !allowed.includes(target))
    .map(({ target, line }) => `${file}:${line}: ${layer} may not import ${target} (allowed: ${allowed.join(", ") || "nothing of the crate"})`);
}

function sources(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : n.endsWith(".rs") ? [p] : [];
  });
}

test("crates/web/src follows the import rules", () => {
  const files = sources(SRC);
  assert.ok(files.length > 40, `found only ${files.length} sources under ${SRC}`);
  const bad = files.flatMap((p) => violations(relative(SRC, p).split("\\").join("/"), readFileSync(p, "utf8")));
  assert.deepEqual(bad, []);
});

test("the checker catches what it must", () => {
  // A feature importing a feature, the platform importing the session, a `super::super` escape.
  assert.equal(violations("timeline/view.rs", "use crate::memory::lane::MemoryLane;").length, 1);
  assert.equal(violations("platform/url.rs", "use crate::{session::Nav, platform::clock};").length, 1);
  assert.equal(violations("memory/x/y.rs", "use super::super::views::fmt;").length, 0); // super::super from memory/x/y -> memory
  assert.equal(violations("memory/x/mod.rs", "use super::super::views::fmt;").length, 1); // memory/x/mod -> crate root -> views
  assert.equal(violations("views/a.rs", "// use crate::timeline::view;\nlet x = 1;").length, 0);
  assert.equal(violations("widgets/t.rs", "crate::session::Nav").length, 1);
  assert.equal(violations("app.rs", "use crate::timeline::view::Timeline; use crate::memory::lane;").length, 0);
  assert.equal(violations("newthing/mod.rs", "").length, 1);
});
