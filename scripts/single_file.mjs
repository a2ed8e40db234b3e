#!/usr/bin/env node
// Inlines a release `dist/` into one self-contained HTML file (default `dist-single/tracelight.html`)
// for attaching to a wiki page or a CI artifact: it opens from `file://`, makes no request of its
// own and needs no server.
//
//   trunk build --release && node scripts/single_file.mjs [DIST] [OUT]
//
// What it does to trunk's output:
// - the stylesheet becomes a <style> element;
// - the wasm-bindgen glue and its JS snippets (the reader worker, `crates/web/js/`) become one
//   inline module script: a browser refuses to import modules from `file://`, so the snippets'
//   imports are replaced by their text (each in its own function scope);
// - the wasm is gzipped and base64-encoded into a non-executing data block, inflated at start with
//   the platform's DecompressionStream (1.3 MB of text where the raw base64 would be 4+ MB);
// - the demo trace is inlined as base64 in another data block, read by the demo button;
// - trunk's preload links go (they would be requests);
// - the Content-Security-Policy of `index.html` is kept, with its `'self'` script and style sources
//   replaced by the sha256 of the inline scripts and style: a `file://` page has no origin for
//   `'self'` to mean, and the hashes allow exactly this build's code and nothing injected.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.resolve(process.argv[2] || path.join(ROOT, 'dist'));
const OUT = path.resolve(process.argv[3] || path.join(ROOT, 'dist-single', 'tracelight.html'));

function fail(msg) {
  console.error(`single_file: ${msg}`);
  process.exit(1);
}

/** A path of trunk's output, as written in index.html (`./x.js`, `/x.js` or `x.js`), on disk. */
function distFile(ref) {
  const clean = ref.replace(/^(\.\/|\/)/, '').split(/[?#]/)[0];
  const file = path.join(DIST, clean);
  if (!file.startsWith(DIST) || !fs.existsSync(file)) fail(`${ref}: not found under ${DIST}`);
  return file;
}

const sha256 = (text) => `'sha256-${crypto.createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The glue with its imports of snippets (`import {…} from './snippets/…'` and `import * as x from
 * …`) replaced by the snippets' text: each snippet runs once, in its own function scope (so its
 * top-level names cannot clash with the glue's), returning its exports. Snippets themselves import
 * nothing (checked).
 */
function bundleGlue(jsRef) {
  const jsFile = distFile(jsRef);
  let glue = fs.readFileSync(jsFile, 'utf8');
  const modules = new Map();
  const snippet = (spec) => {
    const file = path.resolve(path.dirname(jsFile), spec);
    if (!file.startsWith(DIST) || !fs.existsSync(file)) fail(`${spec}: imported by the glue, not found`);
    if (!modules.has(file)) {
      let text = fs.readFileSync(file, 'utf8');
      if (/^\s*import\s/m.test(text)) fail(`${spec}: a snippet that imports is not supported`);
      if (/^\s*export\s+default\b|^\s*export\s*\{/m.test(text)) fail(`${spec}: only 'export function|class|const|let' is supported`);
      const names = [];
      text = text.replace(/^(\s*)export\s+((?:async\s+)?function\*?\s+|class\s+|const\s+|let\s+|var\s+)([A-Za-z_$][\w$]*)/gm, (_, ws, kw, name) => {
        names.push(name);
        return `${ws}${kw}${name}`;
      });
      const id = `__snippet${modules.size}`;
      modules.set(file, { id, code: `const ${id} = (() => {\n${text}\nreturn { ${names.join(', ')} };\n})();` });
    }
    return modules.get(file).id;
  };
  glue = glue.replace(/import\s*\{([^}]*)\}\s*from\s*['"]([^'"]+)['"];?/g, (_, names, spec) => {
    const pairs = names.split(',').map((x) => x.trim()).filter(Boolean).map((x) => {
      const [orig, local] = x.split(/\s+as\s+/).map((y) => y.trim());
      return `${orig}: ${local || orig}`;
    });
    return `const { ${pairs.join(', ')} } = ${snippet(spec)};`;
  });
  glue = glue.replace(/import\s*\*\s*as\s+([A-Za-z_$][\w$]*)\s*from\s*['"]([^'"]+)['"];?/g, (_, local, spec) => `const ${local} = ${snippet(spec)};`);
  if (/^\s*import\s/m.test(glue)) fail('the glue has an import that is not a snippet');
  // A module script may keep its `export` statements; they are simply not importable.
  if (!/async function __wbg_init\b/.test(glue)) fail('no __wbg_init in the glue: wasm-bindgen changed its output');
  return [...modules.values()].map((m) => m.code).join('\n') + '\n' + glue;
}

const indexFile = path.join(DIST, 'index.html');
if (!fs.existsSync(indexFile)) fail(`${indexFile}: run 'trunk build --release' first`);
let html = fs.readFileSync(indexFile, 'utf8');

// Preloads would be requests for files this build does not have.
html = html.replace(/<link\b[^>]*\brel="(modulepreload|preload)"[^>]*>\s*/g, '');

// Stylesheets -> <style>.
const styles = [];
html = html.replace(/<link\b[^>]*\brel="stylesheet"[^>]*>/g, (tag) => {
  const href = /\bhref="([^"]+)"/.exec(tag);
  if (!href) fail(`a stylesheet link without href: ${tag}`);
  const css = fs.readFileSync(distFile(href[1]), 'utf8');
  if (/@import|url\(\s*['"]?(https?:|\/\/)/i.test(css)) fail(`${href[1]}: imports or links outside the page`);
  styles.push(css);
  return `<style>${css}</style>`;
});

// trunk's start-up module -> glue + wasm inline.
const startRe = /<script type="module"[^>]*>([\s\S]*?)<\/script>/;
const start = startRe.exec(html);
if (!start) fail("no start-up module script in index.html (trunk's output changed?)");
const jsRef = /import init[^'"]*from\s*['"]([^'"]+)['"]/.exec(start[1]);
const wasmRef = /['"]([^'"]+_bg\.wasm)['"]/.exec(start[1]);
if (!jsRef || !wasmRef) fail("could not find the glue and the wasm in trunk's start-up script");
const glue = bundleGlue(jsRef[1]);
const wasm = fs.readFileSync(distFile(wasmRef[1]));
const wasmGz = zlib.gzipSync(wasm, { level: 9 });
const boot = `${glue}
// --- single-file start-up: the wasm is gzipped base64 in #tracelight-wasm ---
{
  const packed = document.getElementById('tracelight-wasm').textContent.trim();
  const bin = atob(packed);
  const gz = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) gz[i] = bin.charCodeAt(i);
  const inflated = new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'));
  const bytes = await new Response(inflated).arrayBuffer();
  const instance = await __wbg_init({ module_or_path: bytes });
  dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm: instance } }));
}
`;
let data = `<script type="application/octet-stream" id="tracelight-wasm">${wasmGz.toString('base64')}</script>`;
// The demo trace (already gzip) for the demo button, which reads it from here instead of fetching.
const demo = path.join(DIST, 'demo', 'demo.pt.trace.json.gz');
if (fs.existsSync(demo)) data += `\n<script type="application/octet-stream" id="tracelight-demo">${fs.readFileSync(demo).toString('base64')}</script>`;
html = html.replace(startRe, () => `${data}\n<script type="module">${boot}</script>`);
if (/<script[^>]*\bsrc=|<link\b[^>]*\bhref="(?!data:)/.test(html)) fail('a script or link to another file is left');

// The CSP: 'self' sources of scripts and styles become hashes: a `file://` page has no origin for
// 'self' to mean. script-src gets the sha256 of every inline script left in the page (this
// start-up module and index.html's own, e.g. the one that narrows connect-src); the hashes
// scripts/csp_hashes.mjs added for dist/ are dropped (trunk's start-up script is gone).
const cspRe = /(<meta\s+http-equiv="Content-Security-Policy"\s+content=")([^"]*)(")/i;
const csp = cspRe.exec(html);
if (csp) {
  const scriptHashes = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    .filter((m) => !/\bsrc=|type="application\/octet-stream"/.test(m[1]) && m[2].length > 0)
    .map((m) => sha256(m[2]));
  const styleHashes = styles.map(sha256);
  const policy = csp[2].split(';').map((d) => d.trim()).filter(Boolean).map((d) => {
    const [name, ...srcs] = d.split(/\s+/);
    const swap = (extra) => [name, ...srcs.filter((s) => s !== "'self'" && !s.startsWith("'sha256-")), ...extra].join(' ');
    if (name === 'script-src') return swap(scriptHashes);
    // A hash would switch 'unsafe-inline' off (CSP level 2), and with it the style attributes.
    if (name === 'style-src' || name === 'style-src-elem') return swap(srcs.includes("'unsafe-inline'") ? [] : styleHashes);
    return d;
  }).join('; ');
  html = html.replace(cspRe, (_, a, __, c) => `${a}${policy}${c}`);
}

fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, html);
const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
console.log(`${path.relative(process.cwd(), OUT)}: ${kb(Buffer.byteLength(html))} (wasm ${kb(wasm.length)}, gzipped ${kb(wasmGz.length)}); CSP ${csp ? 'kept, with hashes' : 'none in index.html'}`);
