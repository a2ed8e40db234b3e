// Reads a File or a URL in a dedicated worker and hands fixed-size chunks to the page.
//
// Why a worker: the page's main thread parses, and while it parses it cannot move bytes from the
// browser's file and network pipes (those reads complete as main-thread tasks). Read on the main
// thread, every read waits for the parse before it and the parse waits for the read: ~30 % of a
// load was spent waiting. The worker reads ahead on the other core, a bounded number of chunks at a
// time (the page returns a credit for each chunk it takes), and transfers each buffer without a copy.
//
// The worker is made from a Blob URL of the text below: no request leaves the page for it.

const WORKER = `
let credits = 0;
let wake = null;
const credit = async () => {
  while (credits <= 0) await new Promise((r) => { wake = r; });
  credits -= 1;
};
const send = (buf, raw) => self.postMessage({ kind: 'chunk', buf, raw }, [buf]);
self.onmessage = (e) => {
  const m = e.data;
  if (m.kind === 'credit') {
    credits += 1;
    if (wake) { const w = wake; wake = null; w(); }
    return;
  }
  credits = m.ahead;
  run(m).catch((err) => self.postMessage({ kind: 'error', message: String((err && err.message) || err) }));
};
async function run(m) {
  if (m.file) {
    const f = m.file;
    self.postMessage({ kind: 'start', total: f.size });
    const r = new FileReaderSync();
    let off = 0;
    while (off < f.size) {
      await credit();
      const end = Math.min(off + m.chunk, f.size);
      const buf = r.readAsArrayBuffer(f.slice(off, end));
      off = end;
      send(buf, off);
    }
  } else {
    const resp = await fetch(m.url);
    if (!resp.ok) throw new Error('HTTP ' + resp.status + ' ' + resp.statusText);
    if (!resp.body) throw new Error('empty body');
    const len = Number(resp.headers.get('content-length'));
    self.postMessage({ kind: 'start', total: len > 0 ? len : null });
    const reader = resp.body.getReader();
    let buf = new Uint8Array(m.chunk);
    let fill = 0;
    let raw = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let at = 0;
      while (at < value.length) {
        const n = Math.min(value.length - at, buf.length - fill);
        buf.set(value.subarray(at, at + n), fill);
        fill += n;
        at += n;
        raw += n;
        if (fill === buf.length) {
          await credit();
          send(buf.buffer, raw);
          buf = new Uint8Array(m.chunk);
          fill = 0;
        }
      }
    }
    if (fill > 0) {
      await credit();
      send(buf.buffer.slice(0, fill), raw);
    }
  }
  self.postMessage({ kind: 'done' });
}
`;

export class ChunkSource {
  /** `src` is a File or a URL string; at most `ahead` chunks of `chunk` bytes wait unparsed. */
  constructor(src, chunk, ahead) {
    this.queue = [];
    this.waiter = null;
    const url = URL.createObjectURL(new Blob([WORKER], { type: 'text/javascript' }));
    this.url = url;
    this.worker = new Worker(url);
    this.worker.onmessage = (e) => this.arrive(e.data);
    this.worker.onerror = (e) => {
      e.preventDefault();
      this.arrive({ kind: 'error', message: e.message || 'the reader worker failed' });
    };
    const msg = typeof src === 'string' ? { url: new URL(src, location.href).href } : { file: src };
    this.worker.postMessage({ ...msg, chunk, ahead });
  }

  arrive(m) {
    this.queue.push(m);
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w();
    }
  }

  /**
   * The next message: `{kind: 'start', total}` first, then `{kind: 'chunk', bytes, raw}` (raw: bytes
   * of the source read so far) until `{kind: 'done'}` or `{kind: 'error', message}`.
   */
  async next() {
    while (this.queue.length === 0) await new Promise((r) => { this.waiter = r; });
    const m = this.queue.shift();
    if (m.kind === 'chunk') {
      this.worker.postMessage({ kind: 'credit' });
      return { kind: 'chunk', bytes: new Uint8Array(m.buf), raw: m.raw };
    }
    if (m.kind === 'done' || m.kind === 'error') this.close();
    return m;
  }

  /** Stops the worker (also on cancel and on a parse error). */
  close() {
    this.worker.terminate();
    if (this.url) {
      URL.revokeObjectURL(this.url);
      this.url = null;
    }
  }
}
