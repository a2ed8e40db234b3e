#!/bin/bash
# bash bench/worker_phases.sh SRC_DIST DST_DIST
# Copies a built dist/ and makes its reader workers log each step of a trace's load to the console
# (`PH <worker> <step> <Date.now()> <its wasm MB>`), which `node tests/e2e/bench_load.mjs` (VIA=file) turns into
# `phases`: ms from the pick to the end of each step. The copy's shards.js integrity hash is redone.
# Steps: begin (its share cut), parsed (its share parsed), sent (worker k > 0: its shard handed
# over: its last section posted), got / merged (the merging worker, 0 or K: the next shard's header
# arrived / the shard was merged), finished
# (the model's finish), handed (every model section sent to the page), reloaded (the merging worker
# of a big file, or the helper, read the model back), analysed (the analyses run); with the
# analyses in halves, tabled (the merging worker's half), paced (the helper's), half (the helper's
# came to the merging worker); hold / go (a preview held the parse / let it go).
set -euo pipefail
rm -rf "$2"
cp -a "$1" "$2"
f=$(ls "$2"/snippets/*/js/shards.js)
old=$(openssl dgst -sha384 -binary "$f" | base64 -w0)
python3 - "$f" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
def after(anchor, line, every=False):
    global s
    assert anchor in s, anchor
    s = s.replace(anchor, anchor + line, -1 if every else 1)
# Each step with the instance's memory then (MB; it only grows).
log = lambda who, step: "  console.log('PH ' + %s + ' %s ' + Date.now() + ' ' + Math.round(x.memory.buffer.byteLength / 1e6));\n" % (who, step)
after("  x.tl_begin(me === 0 ? -1 : start, bare ? 1 : 0);\n", log('me', 'begin'))
after("  self.postMessage({ kind: 'parsed', k: me, start, end, bare, ok, slices: x.tl_slices() });\n", log('me', 'parsed'))
after("      self.postMessage({ kind: 'sent', k: me, wasm: x.memory.buffer.byteLength });\n", '    ' + log('me', 'sent'))
# The merging worker's steps per shard k as "<worker>:<k> got" / "<worker>:<k> merged".
after("    const shard = await shardNo(k);\n", '  ' + log("me + ':' + k", 'got'), every=True)
after("    fine = await absorb(shard);\n", '  ' + log("me + ':' + k", 'merged'), every=True)
after("    fine = fine && x.tl_absorb_end() === 0;\n", '  ' + log("me + ':' + k", 'merged'))
after("  const finished = fine && x.tl_finish() === 0;\n", log('me', 'finished'))
after("  self.postMessage({ kind: 'done' });\n", log('me', 'handed'))
after("    model = model && x.tl_reload_end() === 0;\n", '  ' + log('me', 'reloaded'))
# The analyses: whole in the merging worker, or in halves (tabled: its half; half: the helper's
# came; paced: the helper computed it).
after("    const whole = model ? x.tl_analyze(name()) : -1;\n", '  ' + log('me', 'analysed'))
after("  const joined = x.tl_analyze_join(bytes.length > 0 ? put(bytes) : 0);\n", log('me', 'analysed'))
after("  const half = await pacedHalf();\n", log('me', 'half'))
after("    await sendAfterModel(whole);\n    return;\n  }\n", log('me', 'tabled'))
after("    if (model && x.tl_reload_end() === 0 && x.tl_analyze_paced() === 1) json = sections(1);\n", '  ' + log('me', 'paced'))
after("      self.postMessage({ kind: 'spare', buf: q.buf }, [q.buf]);\n    }\n", '  ' + log('me', 'reloaded'))
# A preview's hold on the whole load's workers: when it came and when 'go' let them on.
after("  if (m.kind === 'hold') {\n", "    if (x) " + log('me', 'hold').lstrip())
after("  if (m.kind === 'go') {\n", "    if (x) " + log('me', 'go').lstrip())
open(p, 'w').write(s)
EOF
new=$(openssl dgst -sha384 -binary "$f" | base64 -w0)
sed -i "s|sha384-$old|sha384-$new|" "$2/index.html"
grep -q "sha384-$new" "$2/index.html"
echo "$2: worker steps logged"
