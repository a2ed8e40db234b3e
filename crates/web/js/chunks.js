// Reads a File or a URL in a dedicated worker and hands fixed-size chunks to the page.
//
// Why a worker: the page's main thread parses, and while it parses it cannot move bytes from the
// browser's file and network pipes (those reads complete as main-thread tasks). Read on the main
// thread, every read waits for the parse before it and the parse waits for the read: ~30 % of a
// load was spent waiting. The worker reads ahead on the other core, a bounded number of chunks at a
// time (the page returns a credit for each chunk it takes), and transfers each buffer without a copy.
//
// A gzip source is inflated in the worker too, by the platform's DecompressionStream: off the
// parsing thread and native code, where flate2 in wasm costs the parse as much time again.
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
// Re-chunks a byte stream into buffers of m.chunk bytes; raw() is the source bytes read so far.
async function pump(stream, m, raw) {
  const reader = stream.getReader();
  // The first chunk is smaller, so the parse starts sooner.
  let buf = new Uint8Array(Math.min(m.first || m.chunk, m.chunk));
  let fill = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    let at = 0;
    while (at < value.length) {
      const n = Math.min(value.length - at, buf.length - fill);
      buf.set(value.subarray(at, at + n), fill);
      fill += n;
      at += n;
      if (fill === buf.length) {
        await credit();
        send(buf.buffer, raw());
        buf = new Uint8Array(m.chunk);
        fill = 0;
      }
    }
  }
  if (fill > 0) {
    await credit();
    send(buf.buffer.slice(0, fill), raw());
  }
}
// A promise to wait on, and the function that settles it.
const signal = () => {
  let fire;
  const wait = new Promise((r) => { fire = r; });
  return { wait, fire };
};
// Inflates with DecompressionStream. Its output is read eagerly into a queue (bounded by throttling
// the compressed input instead), because an errored stream drops what was not yet read: on a cut
// file the last decoded bytes would be lost, and the page must keep exactly what flate2 keeps.
// Returns the error that stopped it, or null.
// Compressed bytes per write to DecompressionStream (see below).
const PIECE = 64 << 10;
async function inflate(counted, m, raw) {
  const ds = new DecompressionStream('gzip');
  const writer = ds.writable.getWriter();
  const queue = [];
  let queued = 0;
  let ended = false;
  let failure = null;
  let more = signal();
  let drained = signal();
  const reading = (async () => {
    const r = ds.readable.getReader();
    try {
      for (;;) {
        const { done, value } = await r.read();
        if (done) break;
        queue.push(value);
        queued += value.length;
        more.fire();
      }
    } catch (err) {
      failure = failure || err;
    }
    ended = true;
    more.fire();
  })();
  const sending = pump(new ReadableStream({
    async pull(c) {
      while (queue.length === 0 && !ended) {
        more = signal();
        await more.wait;
      }
      if (queue.length === 0) { c.close(); return; }
      const v = queue.shift();
      queued -= v.length;
      drained.fire();
      c.enqueue(v);
    },
  }, { highWaterMark: 0 }), m, raw);
  const src = counted.getReader();
  try {
    for (;;) {
      while (queued > m.chunk * m.ahead && !ended) {
        drained = signal();
        await drained.wait;
      }
      const { done, value } = await src.read();
      if (done) break;
      // The platform inflates a whole write at once and deflate reaches 1032:1: one 2 MB read of
      // a gzip bomb was 2 GiB of blanks in this worker (10 s, all of it in memory) before the page
      // could refuse its first 16 MiB. Written in pieces of PIECE bytes, one write inflates to at
      // most ~64 MiB and the throttle above applies between pieces.
      for (let at = 0; at < value.length; at += PIECE) {
        while (queued > m.chunk * m.ahead && !ended) {
          drained = signal();
          await drained.wait;
        }
        await writer.write(value.subarray(at, at + PIECE));
      }
    }
    // Let the reader take every chunk the last write produced before close() can error the stream.
    await new Promise((r) => setTimeout(r, 0));
    await writer.close();
  } catch (err) {
    failure = failure || err;
  }
  await reading;
  await sending;
  return failure;
}
async function run(m) {
  let body;
  let total = null;
  if (m.file) {
    body = m.file.stream();
    total = m.file.size;
  } else if (m.stream) {
    // A ReadableStream a host page transferred to the page (postMessage), passed on to here.
    body = m.stream;
    if (m.total > 0) total = m.total;
  } else {
    const resp = await fetch(m.url);
    if (!resp.ok) throw new Error('HTTP ' + resp.status + ' ' + resp.statusText);
    if (!resp.body) throw new Error('empty body');
    const len = Number(resp.headers.get('content-length'));
    if (len > 0) total = len;
    body = resp.body;
  }
  // Counts source bytes as they are read, and peeks at the first ones for the gzip magic.
  const src = body.getReader();
  let raw = 0;
  let first = await src.read();
  while (!first.done && first.value.length < 2) {
    const more = await src.read();
    if (more.done) break;
    const joined = new Uint8Array(first.value.length + more.value.length);
    joined.set(first.value);
    joined.set(more.value, first.value.length);
    first = { done: false, value: joined };
  }
  const counted = new ReadableStream({
    start(c) {
      if (first.done) { c.close(); return; }
      raw += first.value.length;
      c.enqueue(first.value);
    },
    async pull(c) {
      const { done, value } = await src.read();
      if (done) { c.close(); return; }
      raw += value.length;
      c.enqueue(value);
    },
    cancel(why) { return src.cancel(why); },
  });
  const gz = m.inflate && !first.done && first.value[0] === 0x1f && first.value[1] === 0x8b
    && typeof DecompressionStream === 'function';
  self.postMessage({ kind: 'start', total, inflated: gz });
  if (!gz) {
    await pump(counted, m, () => raw);
  } else {
    const failed = await inflate(counted, m, () => raw);
    if (failed) {
      // Chromium says "Compressed input was truncated." when the stream ends early.
      const message = String((failed && failed.message) || failed);
      self.postMessage({ kind: 'gzip-error', message, truncated: /truncat|unexpected end/i.test(message), raw });
      return;
    }
  }
  self.postMessage({ kind: 'done' });
}
`;

// Bytes of the first chunk: parsing starts once these arrive rather than a whole chunk.
const FIRST_CHUNK = 1 << 20;

// A worker started ahead of the next load (at start-up and after each load), so a load does
// not wait for one to start.
let spare = null;
const spawn = () => {
  const url = URL.createObjectURL(new Blob([WORKER], { type: 'text/javascript' }));
  return { url, worker: new Worker(url) };
};

/** Starts the spare worker if there is none. */
export function prewarm() {
  if (!spare) spare = spawn();
}

export class ChunkSource {
  /**
   * `src` is a File (or Blob), a URL string, or `{stream, total}` (a ReadableStream and its
   * announced size, or 0); at most `ahead` chunks of `chunk` bytes wait unparsed. With
   * `inflate`, a gzip source is decompressed in the worker by the platform's DecompressionStream.
   */
  constructor(src, chunk, ahead, inflate) {
    this.queue = [];
    this.waiter = null;
    const w = spare || spawn();
    spare = null;
    this.url = w.url;
    this.worker = w.worker;
    this.worker.onmessage = (e) => this.arrive(e.data);
    this.worker.onerror = (e) => {
      e.preventDefault();
      this.arrive({ kind: 'error', message: e.message || 'the reader worker failed' });
    };
    let msg = { file: src };
    let transfer = [];
    if (typeof src === 'string') {
      msg = { url: new URL(src, location.href).href };
    } else if (src && src.stream instanceof ReadableStream) {
      // `{stream, total}`: the stream moves to the worker (transferred, not copied).
      msg = { stream: src.stream, total: src.total };
      transfer = [src.stream];
    }
    this.worker.postMessage({ ...msg, chunk, first: FIRST_CHUNK, ahead, inflate }, transfer);
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
   * The next message: `{kind: 'start', total, inflated}` first, then `{kind: 'chunk', bytes, raw}`
   * (raw: bytes of the source read so far) until `{kind: 'done'}`, `{kind: 'error', message}` or,
   * when inflating, `{kind: 'gzip-error', message, truncated, raw}`.
   */
  async next() {
    while (this.queue.length === 0) await new Promise((r) => { this.waiter = r; });
    const m = this.queue.shift();
    if (m.kind === 'chunk') {
      this.worker.postMessage({ kind: 'credit' });
      return { kind: 'chunk', bytes: new Uint8Array(m.buf), raw: m.raw };
    }
    if (m.kind !== 'start') this.close();
    return m;
  }

  /** Stops the worker (also on cancel and on a parse error). */
  close() {
    this.worker.terminate();
    if (this.url) {
      URL.revokeObjectURL(this.url);
      this.url = null;
      setTimeout(prewarm, 0);
    }
  }
}
