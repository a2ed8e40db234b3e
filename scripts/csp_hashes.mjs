// Adds the SHA-256 of every inline <script> of an HTML file to the `script-src` of its
// Content-Security-Policy <meta>, so the policy needs no 'unsafe-inline'.
//
// Trunk runs it after each build (Trunk.toml [[hooks]] post_build) on the staged index.html: trunk
// injects an inline module script that imports the hashed wasm-bindgen glue, so its text (and hash)
// changes with every build and cannot be written into index.html by hand. A single-file build can
// run it on its output too: `node scripts/csp_hashes.mjs FILE.html`. Idempotent: hashes from an
// earlier run are replaced.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

const file = process.argv[2] || path.join(process.env.TRUNK_STAGING_DIR || 'dist', 'index.html');
let html = fs.readFileSync(file, 'utf8');

const hashes = [];
for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
  if (/\bsrc\s*=/i.test(m[1]) || m[2].length === 0) continue;
  hashes.push(`'sha256-${crypto.createHash('sha256').update(m[2], 'utf8').digest('base64')}'`);
}

const meta = /(<meta\b[^>]*http-equiv=["']?Content-Security-Policy["']?[^>]*content=")([^"]*)(")/i;
const found = html.match(meta);
if (!found) {
  console.error(`csp_hashes: no Content-Security-Policy <meta content="..."> in ${file}`);
  process.exit(1);
}
const policy = found[2]
  .split(';')
  .map((d) => d.trim())
  .filter(Boolean)
  .map((d) => {
    if (!/^script-src\s/.test(d)) return d;
    const kept = d.split(/\s+/).filter((t) => !t.startsWith("'sha256-"));
    return [...kept, ...hashes].join(' ');
  })
  .join('; ');
html = html.replace(meta, (_, a, __, c) => a + policy + c);
fs.writeFileSync(file, html);
console.log(`csp_hashes: ${hashes.length} inline script(s) hashed into ${file}`);
