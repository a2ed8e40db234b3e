// Reads a trace file on several cores, off the page's thread: K workers, each with its own
// instance of the page's own wasm module (posted to it compiled, so the single-file build and
// file:// pages need no fetch, and no SharedArrayBuffer: no COOP/COEP headers needed).
//
// Worker k reads its share of the file straight from the File (Blob.slice: the OS reads in
// parallel) and parses it as a shard: from the first likely event boundary at or after k·size/K to
// the first one at or after (k+1)·size/K (tl_cut: the same rule from the same bytes gives both
// neighbours the same cut without talking). Worker 0 parses from byte 0, then merges the other
// shards in order as it asks for them (each sent as model sections through the page), checks each
// cut (a cut that was not an event boundary is read again from the file), finishes the model
// (sort, nesting, flows) and hands it to the page one section per credit, so the page decodes one
// section per task and holds at most eight in flight (the page's first credits; each later one gives
// back the buffer of a section decoded, which the worker copies a later section into). For a big
// file (the page says `merger`) one more worker, which parses nothing, does worker 0's merging
// instead, all K shards sent to it (runMerger): its instance holds only the model's columns.
//
// A memory snapshot (a pickle, which cannot be cut) is read by one worker the same way: the whole
// file in pieces; then its views (figures and charts), all at once, which the page draws while the
// model's sections follow ahead of its credits (up to 64 MiB not yet acknowledged); then the flame
// graphs and the whole summary.
//
// The workers are made from a Blob URL of the text below: no request leaves the page for them.

const WORKER = `
let x = null;
let file = null;
let me = 0;
// The shard's share of the file, as cut: [start, end).
let start = 0;
let end = 0;
const mem = () => new Uint8Array(x.memory.buffer);
// Copies bytes into this instance's input buffer; returns their length.
const put = (bytes) => {
  const p = x.tl_input(bytes.length) >>> 0;
  mem().set(bytes, p);
  return bytes.length;
};
// The file's bytes are read by a worker of this worker's own where the platform allows: a read
// whose data arrives on this thread only moves between two pieces' parses, so each waited its
// whole length (on a 50 MB snapshot 80-100 ms of a 480 ms decode); on another thread it is done
// by the time the piece before it is parsed. Else (no nested workers) read here.
const READER = 'let f = null;' +
  'onmessage = async (e) => {' +
  '  const m = e.data;' +
  '  if (m.file) { f = m.file; return; }' +
  '  try {' +
  '    const buf = await f.slice(m.a, m.b).arrayBuffer();' +
  '    postMessage({ id: m.id, buf }, [buf]);' +
  '  } catch (err) {' +
  '    postMessage({ id: m.id, error: String((err && err.message) || err) });' +
  '  }' +
  '};';
let reader = null;
let readerUrl = null;
const reads = new Map();
let readId = 0;
function startReader() {
  if (reader !== null || typeof Worker === 'undefined') return;
  try {
    readerUrl = URL.createObjectURL(new Blob([READER], { type: 'text/javascript' }));
    reader = new Worker(readerUrl);
  } catch (err) {
    reader = false;
    return;
  }
  reader.onmessage = (e) => {
    const m = e.data;
    const r = reads.get(m.id);
    if (!r) return;
    reads.delete(m.id);
    if (m.error !== undefined) r.reject(new Error(m.error));
    else r.resolve(new Uint8Array(m.buf));
  };
  reader.onerror = (e) => {
    e.preventDefault();
    // The reader worker could not run: what it was asked is read here instead.
    reader = false;
    for (const [, r] of reads) r.retry();
    reads.clear();
  };
}
const readHere = async (a, b) => new Uint8Array(await file.slice(a, b).arrayBuffer());
const read = (a, b) => {
  if (!reader) return readHere(a, b);
  return new Promise((resolve, reject) => {
    const id = readId++;
    reads.set(id, { resolve, reject, retry: () => readHere(a, b).then(resolve, reject) });
    reader.postMessage({ id, a, b });
  });
};
const PIECE = 4 << 20;
// A trace's reads double from PIECE up to this. Each Blob read costs the same few ms however
// long it is (the browser's file IPC): on the 2-core machine one worker reading 1 GB alone, with no
// parse, took 2.4-3.1 s in 4 MiB slices and 1.5-1.8 s in 64 MiB ones, and that time was taken from
// the parse beside it (two workers parsing 1 GB: 3.3-3.7 -> 2.8-3.1 s). The first piece stays small
// so the parse starts as soon; each read is handed to the instance in pieces of PIECE.
const PIECE_MAX = 64 << 20;
// Set while a preview of the file's head is on its way: reads stay PIECE long until 'go'. Big
// reads beside the preview's worker took the cores from it (1 GB: first paint 0.88-1.08 s with
// 4 MiB reads, 0.96-1.71 s with doubling ones).
let small = false;
// The first likely event boundary at or after byte 'from' (0 for 0, the file's size if none).
async function cutAt(from) {
  if (from <= 0) return 0;
  if (from >= file.size) return file.size;
  for (let w = 64 << 10; ; w *= 4) {
    const to = Math.min(file.size, from + w);
    const c = x.tl_cut(put(await read(from, to)));
    if (c >= 0) return from + c;
    if (to >= file.size) return file.size;
  }
}
// The sections of this instance's output (tl_sections made them), as buffers to transfer.
function sections(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const p = x.tl_section_ptr(i) >>> 0;
    const len = x.tl_section_len(i) >>> 0;
    out.push(mem().slice(p, p + len).buffer);
  }
  x.tl_sections_clear();
  return out;
}
// Buffers the page gave back with its credits. A model's ~220 MB of sections (1 GB trace) went
// out each into a new buffer, whose pages the kernel zeroed on first touch: ~260 ms of the
// merging worker's copy-out. Reused, only the first few are new.
const spares = [];
const SPARE_MIN = (2 << 20) + 64;
// The section tl_next_section made, copied into a spare buffer (or a new one): [buffer, length].
function section() {
  const p = x.tl_section_ptr(0) >>> 0;
  const len = x.tl_section_len(0) >>> 0;
  const i = spares.findIndex((b) => b.byteLength >= len);
  const buf = i >= 0 ? spares.splice(i, 1)[0] : new ArrayBuffer(Math.max(len, SPARE_MIN));
  new Uint8Array(buf, 0, len).set(mem().subarray(p, p + len));
  x.tl_sections_clear();
  return [buf, len];
}
// A credit from the page, with the buffer of a section it has decoded when it gives one back.
async function credit() {
  const c = await nextMessage();
  if (c && c.buf instanceof ArrayBuffer) spares.push(c.buf);
}
// A trap with this instance's memory near wasm32's 4 GiB end is an allocation that failed: say so
// (the page's budget refuses such files before reading; this is where its estimate was short).
const fail = (err) => {
  const bytes = x ? x.memory.buffer.byteLength : 0;
  if (err instanceof WebAssembly.RuntimeError && bytes > 3 * 2 ** 30) {
    const message = 'too big for a browser tab: a reader worker ran out of memory at ' + (bytes / 1e9).toFixed(2) +
      ' GB of WebAssembly memory (it ends at 4.3 GB). Nothing was lost: the trace already open stays. ' +
      'Open this file with the command-line tool instead: "tracelight summary FILE" (or "analyze FILE --json"), which has no such limit';
    self.postMessage({ kind: 'error', message, oom: true });
    return;
  }
  self.postMessage({ kind: 'error', message: String((err && err.message) || err) });
};
// A worker's progress at most every PROGRESS_MS (and at the end of its share): each message is a
// task on the page's thread (its bar drawn again), and on two cores those slowed the parse beside
// them (a 304 MB trace on two workers: model ready 1,481-1,594 -> 1,302-1,480 ms).
const PROGRESS_MS = 100;
let told = 0;
// Set while the page's thread wants the cores for a moment ('hold': a preview being drawn):
// the parse waits between pieces until 'go', or 1.5 s at most.
let hold = null;
let release = null;
// Parses [a, b) of the file in pieces, reading the next piece while this one parses.
async function parse(a, b) {
  let piece = PIECE;
  let next = a < b ? read(a, Math.min(b, a + piece)) : null;
  for (let at = a; at < b; ) {
    const bytes = await next;
    const to = at + bytes.length;
    piece = small ? PIECE : Math.min(PIECE_MAX, piece * 2);
    next = to < b ? read(to, Math.min(b, to + piece)) : null;
    // Into the instance PIECE bytes at a time: its input buffer stays that long (a buffer grown
    // to 64 MiB beside the shard's columns took worker 1 from 0.23x to 0.45x a 304 MB file).
    for (let o = 0; o < bytes.length; o += PIECE) {
      if (hold) { await hold; hold = null; }
      const part = bytes.subarray(o, Math.min(bytes.length, o + PIECE));
      const ok = x.tl_push(put(part));
      const now = performance.now();
      const done = at + o + part.length;
      if (now - told >= PROGRESS_MS || done >= b) {
        told = now;
        self.postMessage({ kind: 'progress', k: me, bytes: done - a, events: x.tl_events() });
      }
      if (!ok) return false;
    }
    at = to;
  }
  return true;
}
// The shards' messages as they come, by shard: each worker sends its shard as a header
// ({kind: 'shard', k, start, end, bare, n}) then its n sections ('ssec'), each as soon as it is made,
// so that the merge of the first overlaps the making of the next (sent whole, the merging worker
// waited for the last: on 1 GB, 2 workers, ~150 ms after the last parse).
const shardHeads = new Map();
const shardSecs = new Map();
function route(s) {
  if (s.kind === 'shard') shardHeads.set(s.k, s);
  else if (s.kind === 'ssec') {
    if (!shardSecs.has(s.k)) shardSecs.set(s.k, []);
    shardSecs.get(s.k).push(s.buf);
  }
}
// Shard k's header, whichever shard's messages come first (two are asked for at once).
async function shardNo(k) {
  while (!shardHeads.has(k)) route(await nextMessage());
  const h = shardHeads.get(k);
  shardHeads.delete(k);
  return h;
}
// Shard k's next section, as bytes.
async function sectionOf(k) {
  for (;;) {
    const l = shardSecs.get(k);
    if (l && l.length > 0) return new Uint8Array(l.shift());
    route(await nextMessage());
  }
}
// The merging worker, after its own shard: the next shard's sections, merged (or its bytes read
// again). Each section is read as it is copied in, and let go: the instance never holds them all.
// Shards whose cut was not an event boundary, read again in order here (tests read the count).
let readAgain = 0;
async function absorb(h) {
  const r = x.tl_absorb_begin(h.start, h.bare ? 1 : 0, h.n);
  if (r === 1) {
    readAgain++;
    // Its sections taken and let go, so none is left behind in the queue.
    for (let i = 0; i < h.n; i++) await sectionOf(h.k);
    return parse(h.start, h.end);
  }
  if (r !== 0) return false;
  for (let i = 0; i < h.n; i++) {
    if (!x.tl_absorb_section(put(await sectionOf(h.k)))) return false;
  }
  shardSecs.delete(h.k);
  return x.tl_absorb_end() === 0;
}
let queue = [];
let wake = null;
const nextMessage = async () => {
  while (queue.length === 0) await new Promise((r) => { wake = r; });
  return queue.shift();
};
// Imports for an instance that only parses: every import of the module throws if called.
function stubs(module) {
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.kind !== 'function') throw new Error('the module imports a ' + imp.kind);
    const name = imp.name;
    (imports[imp.module] ||= {})[name] = () => {
      throw new Error(name + ' called in a reader worker');
    };
  }
  return imports;
}
// A memory snapshot: one worker reads the whole file in pieces (the next piece read while this
// one decodes), builds the model, then its views, and hands the page the views first, then the
// model in sections.
// Bytes of model sections a snapshot worker sends ahead of the page's credits.
const SNAP_WINDOW = 64 << 20;
// A snapshot's progress: the first after SNAP_PROGRESS_FIRST_MS (the page shows its bar at 0 from
// the start), then at most every PROGRESS_MS: a 50 MB snapshot's drop -> chart was ~15 ms shorter
// without them (298/296 against 319/307 ms, medians of 9 drops).
const SNAP_PROGRESS_FIRST_MS = 250;
async function runSnapshot() {
  x.tl_snap_begin(file.size);
  told = performance.now() + SNAP_PROGRESS_FIRST_MS - PROGRESS_MS;
  // A smaller first piece: the decode starts once 1 MiB is in rather than 4.
  let next = file.size > 0 ? read(0, Math.min(file.size, 1 << 20)) : null;
  let ok = true;
  for (let at = 0; at < file.size && ok; ) {
    const bytes = await next;
    const to = at + bytes.length;
    next = to < file.size ? read(to, Math.min(file.size, to + PIECE)) : null;
    ok = x.tl_snap_push(put(bytes)) === 1;
    at = to;
    const now = performance.now();
    if (now - told >= PROGRESS_MS || at >= file.size) {
      told = now;
      self.postMessage({ kind: 'progress', k: 0, bytes: at, events: 0 });
    }
  }
  const finished = ok && x.tl_snap_finish() === 0;
  // The worker's wasm memory once the model is built (it only grows: its peak), for benchmarks.
  self.postMessage({ kind: finished ? 'model' : 'failed', events: 0, wasm: x.memory.buffer.byteLength });
  if (!finished) {
    const secs = sections(x.tl_error_sections());
    self.postMessage({ kind: 'error-sections', sections: secs }, secs);
    return;
  }
  // The views (each device's figures and chart) first, built here instead of in
  // tasks of seconds on the page's thread, all at once (no credits: a few MB): the page draws the
  // chart from them while the model's sections are made and sent (those had come first, ~15 ms
  // of a 50 MB snapshot's drop -> chart, seconds of a gigabyte's). The whole summary, with the
  // peak's tables (~60 % of the views' time), comes after the model.
  const nv = x.tl_snap_views();
  self.postMessage({ kind: 'analysis', sections: nv, wasm: x.memory.buffer.byteLength });
  for (let i = 0; i < nv; i++) {
    if (x.tl_next_analysis_section() < 0) break;
    const secs = sections(1);
    self.postMessage({ kind: 'asection', buf: secs[0] }, secs);
  }
  // The sections go out ahead of the page's credits, as long as those not yet acknowledged hold
  // under SNAP_WINDOW bytes: the page decodes them as they come (one credit per section waited
  // for made the two one after the other: ~70 ms on a 50 MB snapshot). The page's first credit
  // (on 'model') acknowledges no section.
  const sizes = [];
  let acked = -1;
  let unacked = 0;
  const ack = () => {
    acked++;
    if (acked >= 1) unacked -= sizes[acked - 1];
  };
  for (;;) {
    while (queue.length > 0) { queue.shift(); ack(); }
    while (unacked > SNAP_WINDOW) { await nextMessage(); ack(); }
    const len = x.tl_snap_next_section();
    if (len < 0) break;
    const secs = sections(1);
    sizes.push(len);
    unacked += len;
    self.postMessage({ kind: 'section', buf: secs[0] }, secs);
  }
  // The flame graphs (not shown before the model is in), then the whole summary.
  const nf = x.tl_snap_flames();
  for (let i = 0; i < nf; i++) {
    if (x.tl_next_analysis_section() < 0) break;
    const secs = sections(1);
    self.postMessage({ kind: 'fsection', buf: secs[0] }, secs);
  }
  if (x.tl_snap_summary() >= 0) {
    const secs = sections(1);
    self.postMessage({ kind: 'summary', buf: secs[0] }, secs);
  }
  self.postMessage({ kind: 'done', wasm: x.memory.buffer.byteLength });
}
// What a worker computed after the model (n sections, -1 for none), a section per credit.
async function sendAfterModel(n) {
  self.postMessage({ kind: 'analysis', sections: n, wasm: x.memory.buffer.byteLength });
  for (let i = 0; i < n; i++) {
    await credit();
    if (x.tl_next_analysis_section() < 0) break;
    const [buf, len] = section();
    self.postMessage({ kind: 'asection', buf, len }, [buf]);
  }
}
// The instance made ahead of the load when this worker was started as the spare (prespawn).
let ready = null;
// A task's end: messages that came meanwhile are taken (a timer would wait 4 ms once nested).
const tick = () => new Promise((r) => {
  const c = new MessageChannel();
  c.port1.onmessage = () => { c.port1.close(); r(); };
  c.port2.postMessage(0);
});
// Until a message (of the kind given, if any) comes, up to mib MiB of memory written for the
// merge, 8 MiB a task, and let go when it comes (tl_touch: the merge's allocations reuse those
// pages instead of faulting in new ones on the load's serial path).
async function touchWhileWaiting(mib, kind) {
  mib = Math.max(0, Math.floor(mib));
  const come = () => (kind ? queue.some((q) => q.kind === kind) : queue.length > 0);
  while (!come() && mib > 0 && x.tl_touch(8, mib) === 1) await tick();
  x.tl_touch_free();
}
// Of the bytes a merging worker will merge, the share it writes ahead while it waits: below the
// ~0.4x its instance grows by when it merges (1 GB on two workers), so its peak stays where it was.
const TOUCH_SHARE = 0.2;
async function run(m) {
  const pre = ready;
  ready = null;
  const inst = (pre && await pre.catch(() => null)) || await WebAssembly.instantiate(m.module, stubs(m.module));
  x = inst.exports;
  file = m.file;
  me = m.k;
  startReader();
  if (reader) reader.postMessage({ file });
  if (m.mode === 'snapshot') return runSnapshot();
  if (m.role === 'merger') {
    me = m.n;
    return runMerger(m);
  }
  const head = await read(0, Math.min(file.size, 64 << 10));
  const bare = x.tl_first_byte(put(head)) === 0x5b;
  start = await cutAt(m.from);
  end = m.last ? file.size : await cutAt(m.to);
  x.tl_begin(me === 0 ? -1 : start, bare ? 1 : 0);
  const ok = await parse(start, end);
  x.tl_input_free();
  self.postMessage({ kind: 'parsed', k: me, start, end, bare, ok, slices: x.tl_slices() });
  if (me !== 0 || m.merger) {
    // One section at a time out of the instance, each into its own buffer and sent at once.
    const send = () => {
      const n = x.tl_shard_sections();
      self.postMessage({ kind: 'shard', k: me, start, end, bare, n });
      for (let i = 0; i < n; i++) {
        x.tl_shard_section(i);
        const secs = sections(1);
        self.postMessage({ kind: 'ssec', k: me, buf: secs[0] }, secs);
      }
      self.postMessage({ kind: 'sent', k: me, wasm: x.memory.buffer.byteLength });
    };
    // A shard the merging worker asks for first is sent at once, while the other workers still
    // parse (the merging worker's ask would find it ready: on 1 GB, 2 workers, its ~160 ms were
    // spent after the last parse, both cores but one idle); the others wait for their turn, so
    // that no more shards' sections than the merging worker takes at once sit in memory.
    const askedFirst = m.merger ? me < 2 : me === 1;
    if (!askedFirst) await nextMessage();
    send();
    if (m.helper === me) await help();
    self.close();
    return;
  }
  // The next shard is asked for before this one is merged: its worker copies its sections out
  // and they travel while this one merges, not after (one shard's sections in flight more).
  let fine = ok;
  if (m.n > 1) self.postMessage({ kind: 'want', k: 1 });
  for (let k = 1; k < m.n && fine; k++) {
    if (k === 1) await touchWhileWaiting(TOUCH_SHARE * (file.size - end) / 2 ** 20);
    const shard = await shardNo(k);
    if (k + 1 < m.n) self.postMessage({ kind: 'want', k: k + 1 });
    fine = await absorb(shard);
  }
  return finishAndSend(m, fine);
}
// The helper, once its shard is sent: the model, read back from the sections the page decoded as
// the page hands them on ('msec', each buffer given back for the merging worker to copy a later
// section into; 'mend' after the last), then the analyses of steps and time (the half of
// Analysis::of the merging worker does not compute meanwhile), sent to it as 'paced'. Whatever
// fails here sends none: the merging worker then computes that half itself.
async function help() {
  let json = [];
  try {
    x.tl_reload_begin();
    let model = true;
    for (;;) {
      const q = await nextMessage();
      if (q.kind === 'mend') break;
      if (q.kind !== 'msec') continue;
      if (model) model = x.tl_reload_section(put(new Uint8Array(q.buf, 0, q.len))) === 1;
      self.postMessage({ kind: 'spare', buf: q.buf }, [q.buf]);
    }
    if (model && x.tl_reload_end() === 0 && x.tl_analyze_paced() === 1) json = sections(1);
  } catch (err) {
    json = [];
  }
  self.postMessage({ kind: 'paced', sections: json, wasm: x.memory.buffer.byteLength }, json);
}
// The helper's half, when it comes (routed here by onmessage, not queued).
let paced = null;
let pacedCame = null;
const pacedHalf = () => paced || new Promise((r) => { pacedCame = r; });
// The merging worker of a big file: it parses nothing (its instance holds no shard's leftovers).
// Once every worker has parsed its share ('plan': their slices together), it asks for each shard
// in order; the first becomes the reader the others merge into, its staged columns one block each
// of the plan's slices, which the model's finish then reuses (tl_merge_first). In worker 0 the
// finish's columns found no hole among its own shard's chunks and grew the instance beside them.
async function runMerger(m) {
  // At most 256 MiB: the merging worker of a 10 GB file has no room for a hole the merge's
  // allocations would not fit. The first shards' messages may come before the plan: kept for
  // their turn.
  await touchWhileWaiting(Math.min(256, TOUCH_SHARE * file.size / 2 ** 20), 'plan');
  let plan = null;
  while (!plan) {
    const q = await nextMessage();
    if (q.kind === 'plan') plan = q;
    else route(q);
  }
  let fine = true;
  // Two shards asked for at once, then one more as each arrives: their workers make their
  // sections side by side (on a 10 GB file each took ~3.8 s, one after the other), and no more
  // than two shards' sections wait here.
  self.postMessage({ kind: 'want', k: 0 });
  if (m.n > 1) self.postMessage({ kind: 'want', k: 1 });
  for (let k = 0; k < m.n && fine; k++) {
    const shard = await shardNo(k);
    if (k + 2 < m.n) self.postMessage({ kind: 'want', k: k + 2 });
    if (k > 0) {
      fine = await absorb(shard);
      continue;
    }
    fine = x.tl_merge_first(shard.n, plan.slices) === 0;
    for (let i = 0; i < shard.n && fine; i++) {
      fine = x.tl_absorb_section(put(await sectionOf(0))) === 1;
    }
    shardSecs.delete(0);
    fine = fine && x.tl_absorb_end() === 0;
  }
  return finishAndSend(m, fine);
}
// The merging worker, after the last shard: the model finished, handed to the page a section per
// credit, then analysed.
async function finishAndSend(m, fine) {
  const finished = fine && x.tl_finish() === 0;
  self.postMessage({ kind: finished ? 'model' : 'failed', events: x.tl_events(), wasm: x.memory.buffer.byteLength, again: readAgain });
  if (!finished) {
    const secs = sections(x.tl_error_sections());
    self.postMessage({ kind: 'error-sections', sections: secs }, secs);
    return;
  }
  // The merging worker of a big file keeps a copy of each section, to read the model back before
  // the analyses (tl_reload_begin).
  const kept = m.role === 'merger' ? [] : null;
  for (;;) {
    await credit();
    if (x.tl_next_section() < 0) break;
    const [buf, len] = section();
    if (kept) kept.push(buf.slice(0, len));
    self.postMessage({ kind: 'section', buf, len }, [buf]);
  }
  self.postMessage({ kind: 'done' });
  let model = true;
  if (kept) {
    x.tl_reload_begin();
    for (let i = 0; i < kept.length && model; i++) {
      model = x.tl_reload_section(put(new Uint8Array(kept[i]))) === 1;
      kept[i] = null;
    }
    model = model && x.tl_reload_end() === 0;
  }
  // Then the timeline's parts beside its index (counter tracks, groups, step marks: passes of
  // up to half a second each on the page's thread for a 10 GB trace), while the page builds the
  // index; then every analysis of the model (Analysis::of) instead of in one task of seconds on
  // the page's thread. Each sent a section per credit, as 'analysis' then its 'asection's.
  // A preview's page makes its own (the head's passes are short there, and the first paint
  // would wait for them here, before the analyses).
  if (!m.preview) await sendAfterModel(model ? x.tl_timeline() : -1);
  const name = () => put(new TextEncoder().encode(m.name));
  if (!model || !(m.helper > 0) || x.tl_analyze_tables(name()) !== 0) {
    const whole = model ? x.tl_analyze(name()) : -1;
    await sendAfterModel(whole);
    return;
  }
  // The other half comes from the helper (an empty one when it had none: computed here then).
  const half = await pacedHalf();
  const bytes = half.sections.length > 0 ? new Uint8Array(half.sections[0]) : new Uint8Array(0);
  const joined = x.tl_analyze_join(bytes.length > 0 ? put(bytes) : 0);
  await sendAfterModel(joined);
}
// Set once a load starts here: the warm-up stops.
let started = false;
// The spare worker's warm-up while the page waits for a file: passes of a reader worker's whole
// path over the demo's trace (tl_warm_up), one per task, until a load starts. V8 optimizes a
// function once it has run a while, and the optimized code serves the page and every worker.
// Posts how many passes ran through ('warmed'). A pass that traps leaves an instance not to be
// trusted: the load then makes a new one.
async function warm(ex, passes) {
  let ok = 0;
  let k = 0;
  for (; k < passes && !started; k++) {
    await new Promise((r) => setTimeout(r, 0));
    if (started) break;
    try {
      ok += ex.tl_warm_up(k);
    } catch (err) {
      if (!started) ready = null;
      break;
    }
  }
  if (passes > 0) self.postMessage({ kind: 'warmed', passes: k, ok });
}
self.onmessage = (e) => {
  const m = e.data;
  if (m.kind === 'start') {
    started = true;
    // Here, not in run(): a 'go' may come while run() waits for its instance.
    small = !!m.small;
    run(m).catch(fail);
    return;
  }
  if (m.kind === 'module') {
    startReader();
    // A failure here surfaces at 'start', which instantiates again and reports it.
    try {
      ready = WebAssembly.instantiate(m.module, stubs(m.module));
      ready.catch(() => { ready = null; });
      // Memory touched here, while idle, is given back to the allocator: a load's first
      // allocations then reuse it instead of growing the instance (see tl_prefault). Then the
      // first spare of a page warms the code up (tl_warm_up).
      ready.then((i) => {
        if (m.prefault > 0) i.exports.tl_prefault(m.prefault);
        return warm(i.exports, m.warm || 0);
      }).catch(() => {});
    } catch (err) {
      ready = null;
    }
    return;
  }
  // A buffer the page handed the helper a model section in, back for the next section's copy.
  if (m.kind === 'spare') {
    spares.push(m.buf);
    return;
  }
  if (m.kind === 'paced') {
    paced = m;
    if (pacedCame) pacedCame(m);
    return;
  }
  if (m.kind === 'hold') {
    if (!hold) hold = new Promise((r) => { release = r; setTimeout(r, 1500); });
    return;
  }
  if (m.kind === 'go') {
    small = false;
    if (release) release();
    hold = null;
    release = null;
    return;
  }
  queue.push(m);
  if (wake) { const w = wake; wake = null; w(); }
};
`;

let url = null;
const workerUrl = () => {
  if (!url) url = URL.createObjectURL(new Blob([WORKER], { type: 'text/javascript' }));
  return url;
};

// A worker started ahead of the next load, its instance made (at start-up and when the page is
// idle after a load): the first worker of a load takes it instead of starting one (~40 ms of a
// 50 MB snapshot's half second went to starting its worker).
let spare = null;
let spareModule = null;

/**
 * MiB of memory the spare worker touches ahead of a load: a fresh instance's memory costs ~0.6 ms
 * per MiB the first time it is written (on a 50 MB snapshot ~45 ms of a ~250 ms decode, measured
 * as bare wasm). Not on a machine that says it has under 4 GB (`navigator.deviceMemory`), where an
 * idle worker holding 64 MiB would cost more than it saves.
 */
const prefaultMiB = () => ((navigator.deviceMemory ?? 8) >= 4 ? 64 : 0);

/**
 * Warm-up passes of the page's first spare worker (tl_warm_up: 2 of one step of the demo, then
 * the demo's ten steps). Later spares run none: the code they would optimize already is.
 */
const WARM_PASSES = 10;
let warmPasses = WARM_PASSES;

/** Starts the spare worker for `module` if there is none. */
export function prespawn(module) {
  spareModule = module;
  if (spare || typeof Worker === 'undefined') return;
  try {
    spare = new Worker(workerUrl());
    // How far its warm-up went, where a test reads it: `<html data-worker-warm-up="ran/through">`.
    spare.onmessage = (e) => warmed(e.data);
    spare.postMessage({ kind: 'module', module, prefault: prefaultMiB(), warm: warmPasses });
    warmPasses = 0;
  } catch (e) {
    spare = null;
  }
}

function warmed(m) {
  if (m && m.kind === 'warmed' && typeof document !== 'undefined') {
    document.documentElement.dataset.workerWarmUp = `${m.passes}/${m.ok}`;
  }
}

export class ShardPool {
  /**
   * Parses `file` (a File or Blob; `name` is the trace's name, the File's by default) on `k`
   * workers with instances of `module`. `next()` gives, in order:
   * `{kind: 'progress', bytes, events}` (any number), then `{kind: 'model', events}` and one
   * `{kind: 'section', bytes}` per `credit()` until `{kind: 'done'}`; or
   * `{kind: 'failed'}` then `{kind: 'error', sections}` (an encoded error); or
   * `{kind: 'error', message}` when a worker itself failed. After `done`, the timeline's parts
   * (`view::parts`), then the analysis, each as `{kind: 'analysis', sections: n}` (n < 0: none)
   * and one `{kind: 'asection', bytes}` per `credit()`, n of them. `mode` 'snapshot' reads a memory snapshot whole in one worker (k is
   * then 1): after `model` come its first views as the analysis, every `asection` without
   * credits, then its model's sections, its flame graphs' (`{kind: 'fsection', bytes}`, without
   * credits), `{kind: 'summary', bytes}` (the whole summary) and `done`;
   * anything else a
   * Kineto trace. `previewTo` > 0 reads only the trace's head, from byte 0 to the first event
   * boundary at or after that byte, in one worker: the model of what a slower whole load will
   * show, to look at meanwhile (its end, the cut, comes as `{kind: 'parsed', end}`). `small`: a
   * preview is on its way, keep reads short until `go()`. `merger`: one more worker, which parses
   * nothing, merges the k shards (worker 0's included) and finishes the model: its instance then
   * holds no shard's chunks beside the model's columns (a big file's peak). `halves`: worker 1,
   * its shard sent, stays as the helper: the page hands it each model section it has decoded
   * (the buffers go back to worker 0 from there), it reads the model back and computes the
   * analyses of steps and time while worker 0 computes the tables, then sends worker 0 its half.
   */
  constructor(module, file, k, name, mode, previewTo, small, merger, halves) {
    const preview = previewTo > 0;
    if (preview) k = 1;
    merger = !!merger && !preview && mode !== 'snapshot';
    // The helper (worker 1), or -1 for none.
    this.helper = halves && !merger && !preview && mode !== 'snapshot' && k >= 2 ? 1 : -1;
    // Lengths of the model's sections the page is decoding, in order, to hand on to the helper.
    this.forward = [];
    this.modelDone = false;
    // The worker that merges the shards and hands out the model: worker 0, or with `merger` one
    // more that parses nothing.
    this.head = merger ? k : 0;
    this.slices = 0;
    this.shardsParsed = 0;
    // Which worker merged the last load's shards, where tests and benchmarks read it.
    if (!preview && mode !== 'snapshot' && typeof document !== 'undefined') {
      document.documentElement.dataset.mergedBy = merger ? 'merger' : 'worker 0';
    }
    this.queue = [];
    this.waiter = null;
    this.workers = [];
    this.parsed = new Array(k).fill(0);
    this.events = new Array(k).fill(0);
    this.pending = new Map();
    this.wanted = 0;
    this.preview = preview;
    for (let i = 0; i < k; i++) {
      const w = (i === 0 && spare && spareModule === module) ? spare : new Worker(workerUrl());
      if (w === spare) spare = null;
      w.onmessage = (e) => this.onWorker(i, e.data);
      w.onerror = (e) => {
        e.preventDefault();
        // The helper failing only means worker 0 computes its half too.
        if (i === this.helper && this.workers[i] === null) {
          if (this.helperWorker) this.helperGone();
          return;
        }
        this.arrive({ kind: 'error', message: e.message || 'a reader worker failed' });
      };
      const from = Math.floor((file.size * i) / k);
      const to = preview ? previewTo : Math.floor((file.size * (i + 1)) / k);
      const last = !preview && i === k - 1;
      w.postMessage({ kind: 'start', module, file, name: name ?? file.name ?? '', k: i, n: k, from, to, last, mode, small: !!small, merger, preview, helper: this.helper });
      this.workers.push(w);
    }
    if (merger) {
      const w = new Worker(workerUrl());
      w.onmessage = (e) => this.onWorker(k, e.data);
      w.onerror = (e) => {
        e.preventDefault();
        this.arrive({ kind: 'error', message: e.message || 'a reader worker failed' });
      };
      w.postMessage({ kind: 'start', module, file, name: name ?? file.name ?? '', k, n: k, role: 'merger', mode, small: !!small, merger });
      this.workers.push(w);
    }
  }

  onWorker(i, m) {
    switch (m.kind) {
      case 'warmed':
        warmed(m);
        break;
      case 'progress': {
        this.parsed[i] = m.bytes;
        this.events[i] = m.events;
        const bytes = this.parsed.reduce((a, b) => a + b, 0);
        const events = this.events.reduce((a, b) => a + b, 0);
        this.arrive({ kind: 'progress', bytes, events });
        break;
      }
      case 'parsed':
        // A preview's cut: where its head ends in the file.
        if (this.preview) this.arrive({ kind: 'parsed', end: m.end, ok: m.ok });
        // The merging worker reserves for every shard's slices once all are parsed.
        this.slices += m.slices || 0;
        if (this.head !== 0 && ++this.shardsParsed === this.head) {
          this.workers[this.head].postMessage({ kind: 'plan', slices: this.slices });
        }
        break;
      case 'want':
        // Worker 0 merges shard m.k next: ask that worker for it (one asked for first has sent
        // it already, and may be gone).
        if (this.workers[m.k]) this.workers[m.k].postMessage({ kind: 'send' });
        break;
      case 'shard':
      case 'ssec':
        if (this.workers[this.head]) this.workers[this.head].postMessage(m, m.buf ? [m.buf] : []);
        break;
      case 'sent':
        this.peak(m.wasm, 'shardWorkerWasmBytes');
        // The helper stays, out of the list of workers that parse (see helperGone).
        if (i === this.helper) this.helperWorker = this.workers[i];
        this.workers[i] = null;
        break;
      case 'spare':
        if (this.workers[this.head]) this.workers[this.head].postMessage(m, [m.buf]);
        break;
      case 'paced':
        this.peak(m.wasm, 'shardWorkerWasmBytes');
        this.helperWorker = null;
        // Whether the helper computed its half (tests read it): 'helper', or 'none'.
        if (typeof document !== 'undefined') document.documentElement.dataset.pacedBy = m.sections.length > 0 ? 'helper' : 'none';
        if (this.workers[this.head]) this.workers[this.head].postMessage(m, m.sections);
        break;
      case 'model':
      case 'failed':
        this.peak(m.wasm);
        // How many shards the merging worker read again from the file (a cut inside an event).
        if (m.again !== undefined && typeof document !== 'undefined') {
          document.documentElement.dataset.shardsReadAgain = String(m.again);
        }
        this.arrive({ kind: m.kind, events: m.events });
        break;
      case 'done':
        this.peak(m.wasm);
        this.modelDone = true;
        this.handOn();
        this.arrive({ kind: 'done' });
        break;
      case 'analysis':
        this.peak(m.wasm);
        this.arrive({ kind: m.kind, sections: m.sections });
        break;
      case 'section':
        if (this.helperWorker) this.forward.push(m.len ?? m.buf.byteLength);
      // falls through
      case 'asection':
      case 'fsection':
      case 'summary':
        this.arrive({ kind: m.kind, bytes: new Uint8Array(m.buf, 0, m.len ?? m.buf.byteLength) });
        break;
      case 'error-sections':
        this.arrive({ kind: 'error', sections: m.sections.map((s) => new Uint8Array(s)) });
        break;
      default:
        this.arrive(m);
    }
  }

  /** A worker's wasm memory (it only grows: its peak so far), where a benchmark reads it: the
   * merging worker's as `<html data-worker-wasm-bytes>`, the largest of the others' as
   * `data-shard-worker-wasm-bytes`. */
  peak(bytes, key = 'workerWasmBytes') {
    if (!bytes || typeof document === 'undefined') return;
    const d = document.documentElement.dataset;
    d[key] = String(Math.max(bytes, Number(d[key] || 0)));
  }

  arrive(m) {
    // Progress replaces progress not yet taken: the page wants the latest figure only.
    const last = this.queue[this.queue.length - 1];
    if (m.kind === 'progress' && last && last.kind === 'progress') this.queue[this.queue.length - 1] = m;
    else this.queue.push(m);
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w();
    }
  }

  /**
   * The next message; `{kind: 'tick'}` instead when none came within `ms` (when given), so the
   * page can look at its Cancel button while a worker computes for seconds without a word.
   */
  async next(ms) {
    if (this.queue.length === 0) {
      await new Promise((r) => {
        this.waiter = r;
        if (ms > 0) setTimeout(r, ms);
      });
    }
    if (this.queue.length === 0) {
      this.waiter = null;
      return { kind: 'tick' };
    }
    return this.queue.shift();
  }

  /**
   * Holds the parse between pieces (every 4 MiB) until `go()`, 1.5 s at most: the page's thread
   * wants the cores for a moment. Merging and analysing are not held.
   */
  hold() {
    for (const w of this.workers) if (w) w.postMessage({ kind: 'hold' });
  }

  go() {
    for (const w of this.workers) if (w) w.postMessage({ kind: 'go' });
  }

  /** Asks the merging worker for the model's next section, giving back (when given) the buffer
   * of one it has decoded, for the worker to copy a later one into. */
  credit(buf) {
    const w = this.workers[this.head];
    if (!w) return;
    if (buf instanceof ArrayBuffer && this.helperWorker && this.forward.length > 0) {
      // A model section decoded: its bytes are the helper's now; the buffer comes back from it.
      this.helperWorker.postMessage({ kind: 'msec', buf, len: this.forward.shift() }, [buf]);
      w.postMessage({ kind: 'credit' });
      this.handOn();
      return;
    }
    if (buf instanceof ArrayBuffer) w.postMessage({ kind: 'credit', buf }, [buf]);
    else w.postMessage({ kind: 'credit' });
  }

  /** Tells the helper the model is whole once every section is handed on. */
  handOn() {
    if (this.helperWorker && this.modelDone && this.forward.length === 0 && !this.handedOn) {
      this.handedOn = true;
      this.helperWorker.postMessage({ kind: 'mend' });
    }
  }

  /** The helper failed: worker 0 computes the steps-and-time half itself. */
  helperGone() {
    if (this.helperWorker) this.helperWorker.terminate();
    this.helperWorker = null;
    this.forward = [];
    if (this.workers[this.head]) this.workers[this.head].postMessage({ kind: 'paced', sections: [] });
  }

  /** Stops every worker (also on cancel and on an error). */
  close() {
    for (const w of this.workers) if (w) w.terminate();
    if (this.helperWorker) this.helperWorker.terminate();
    this.helperWorker = null;
    this.workers = [];
    if (spareModule) setTimeout(() => prespawn(spareModule), 0);
  }
}

/** Cores the browser reports (navigator.hardwareConcurrency). */
export function cores() {
  return navigator.hardwareConcurrency || 1;
}

/**
 * The gzip `blob` inflated by the platform (DecompressionStream: native code, off the page's
 * thread), as a Blob the workers then slice like a file. Rejects on a cut or damaged stream (the
 * page's own reader then reads the file and reports it as flate2 does).
 */
export async function inflated(blob) {
  return new Response(blob.stream().pipeThrough(new DecompressionStream('gzip'))).blob();
}

/** The first `n` bytes (or fewer) of the gzip `blob` inflated, to sniff its format. */
export async function inflatedHead(blob, n) {
  const reader = blob.slice(0, Math.min(blob.size, 1 << 20)).stream()
    .pipeThrough(new DecompressionStream('gzip')).getReader();
  const parts = [];
  let got = 0;
  try {
    while (got < n) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      got += value.length;
    }
  } catch (e) {
    // The head is a cut gzip stream by construction: what came before the cut is enough.
  }
  reader.cancel().catch(() => {});
  const out = new Uint8Array(got);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

/**
 * Fetches `url` (the page's one request for `?url=`): `{stream, total}` (the body and its
 * Content-Length, 0 when not given), for the reader worker or for `blobOf`.
 */
export async function fetchBody(url) {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error('HTTP ' + resp.status + ' ' + resp.statusText);
  if (!resp.body) throw new Error('empty body');
  return { stream: resp.body, total: Number(resp.headers.get('content-length')) || 0 };
}

/** A fetched body read whole into a Blob (kept by the browser, outside wasm memory). */
export async function blobOf(stream, name) {
  const blob = await new Response(stream).blob();
  return new File([blob], name);
}
