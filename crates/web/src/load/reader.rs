//! The reader worker (`js/chunks.js`), bound: it reads a `File` or fetches a URL a bounded number
//! of chunks ahead, inflating gzip with the platform's `DecompressionStream`, and each message it
//! posts is decoded into a typed [`Chunk`].

use crate::platform::clock::now_ms;
use crate::platform::url::query_param;
use js_sys::{Reflect, Uint8Array};
use tracelight_core::{Error, ErrorKind};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Bytes per chunk the reader worker hands over (each is one message and one copy into wasm).
const READ_BYTES: u64 = 4 << 20;

/// A read failure of `label` (the file or URL) with the browser's message.
pub(super) fn read_error(label: &str, message: String) -> Error {
    Error::new(ErrorKind::Io(message), 0).in_file(label)
}

pub(super) fn js_err(v: JsValue) -> String {
    v.as_string()
        .or_else(|| {
            v.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{v:?}"))
}

#[wasm_bindgen(module = "/js/chunks.js")]
extern "C" {
    /// Reads a `File` or a URL in a worker, a bounded number of chunks ahead (see `js/chunks.js`).
    type ChunkSource;
    #[wasm_bindgen(constructor, catch)]
    fn new(src: &JsValue, chunk: f64, ahead: u32, inflate: bool) -> Result<ChunkSource, JsValue>;
    #[wasm_bindgen(method)]
    fn next(this: &ChunkSource) -> js_sys::Promise;
    #[wasm_bindgen(method)]
    fn close(this: &ChunkSource);
    /// Starts a reader worker ahead of the next load.
    pub(super) fn prewarm();
}

/// Chunks the worker may hold ready beyond the one being parsed: enough to ride out a slow read,
/// few enough that the bytes outside wasm memory stay small (16 MiB).
const READ_AHEAD: u32 = 4;

/// What the worker sends, decoded.
pub(super) enum Chunk {
    /// The source's size when known, and whether the worker inflates it.
    Start(Option<u64>, bool),
    /// Bytes, and how many bytes of the source they account for so far.
    Bytes(Uint8Array, u64),
    /// The platform inflater stopped: cut short (`true`) or corrupt.
    GzipFailed(bool, String),
    Done,
}

/// Owns the worker: dropping it (a cancel, a parse error) stops the reads.
pub(super) struct Source(ChunkSource, pub(super) f64);

impl Drop for Source {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Whether gzip is inflated by the platform's `DecompressionStream` in the reader worker (the
/// default: off the parsing thread, in native code) or by flate2 in the parsing thread. Measured in
/// one build, alternating, on 2 cores: a 100 MB trace (8 MB gz) opened in 0.73-0.86 s the first
/// way and 0.81-0.90 s the second (BENCHMARKS.md). `?inflate=wasm` forces flate2 (tests,
/// benchmarks); the worker falls back to it by itself where `DecompressionStream` is missing.
fn inflate_in_worker() -> bool {
    query_param("inflate").as_deref() != Some("wasm")
}

impl Source {
    pub(super) fn open(src: &JsValue, label: &str) -> Result<Self, Error> {
        let asked = now_ms();
        let source = ChunkSource::new(src, READ_BYTES as f64, READ_AHEAD, inflate_in_worker())
            .map(|c| Source(c, asked))
            .map_err(|e| read_error(label, js_err(e)))?;
        Ok(source)
    }

    pub(super) async fn next(&self, label: &str) -> Result<Chunk, Error> {
        let m = JsFuture::from(self.0.next())
            .await
            .map_err(|e| read_error(label, js_err(e)))?;
        let get = |k: &str| Reflect::get(&m, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED);
        match get("kind").as_string().as_deref() {
            Some("start") => Ok(Chunk::Start(
                get("total").as_f64().map(|t| t as u64),
                get("inflated").as_bool().unwrap_or(false),
            )),
            Some("chunk") => get("bytes")
                .dyn_into()
                .map(|b| Chunk::Bytes(b, get("raw").as_f64().unwrap_or(0.0) as u64))
                .map_err(|_| read_error(label, "a chunk that is not bytes".into())),
            Some("gzip-error") => Ok(Chunk::GzipFailed(
                get("truncated").as_bool().unwrap_or(false),
                get("message").as_string().unwrap_or_default(),
            )),
            Some("done") => Ok(Chunk::Done),
            _ => Err(read_error(
                label,
                get("message")
                    .as_string()
                    .unwrap_or_else(|| "the read failed".into()),
            )),
        }
    }
}
