//! Opening digests (`tracelight digest` output, [`tracelight_core::digest`]): each
//! `STEM.digest.json` with the Parquet tables it lists, picked or dropped together (a digest
//! folder, or a run folder holding one). A digest becomes a trace file of the session whose
//! trace is the digest's timeline skeleton and whose analysis is the digest's, so the run bar,
//! the Ranks tab and its aligned timelines work as on the traces. The files are small (tens of
//! KB per rank), so they are read whole, not through the reader worker.

use crate::platform::clock::now_ms;
use crate::session::{Content, LoadedFile, TraceFile};
use std::collections::HashMap;
use tracelight_core::digest::{table_files, Digest, HEADER_SUFFIX};
use tracelight_core::{Error, ErrorKind};
use wasm_bindgen_futures::JsFuture;

/// A digest's header or one of its tables.
pub fn is_digest_part(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with(HEADER_SUFFIX) || n.ends_with(".parquet")
}

async fn bytes_of(f: &web_sys::File) -> Result<Vec<u8>, Error> {
    let buf = JsFuture::from(f.array_buffer()).await.map_err(|e| {
        let why = e
            .as_string()
            .unwrap_or_else(|| "the browser refused".into());
        Error::new(ErrorKind::Io(why), 0).in_file(&f.name())
    })?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

async fn one(
    header: &web_sys::File,
    tables: &HashMap<String, web_sys::File>,
) -> Result<LoadedFile, Error> {
    let t0 = now_ms();
    let name = header.name();
    let head = bytes_of(header).await?;
    let mut read: HashMap<String, Vec<u8>> = HashMap::new();
    let mut bytes = head.len() as u64;
    for file in table_files(&name, &head)? {
        let f = tables.get(&file).ok_or_else(|| {
            Error::new(ErrorKind::Io(format!("{file} was not picked with it")), 0).in_file(&name)
        })?;
        let b = bytes_of(f).await?;
        bytes += b.len() as u64;
        read.insert(file, b);
    }
    // The run's figures only: see `Digest::read_run_only` (wasm size).
    let d = Digest::read_run_only(&name, &head, |f| read.remove(f))?;
    let r = d.rebuild(&name)?;
    let tf = TraceFile::new(&name, r.trace).with_analysis(r.analysis);
    let end = now_ms();
    Ok(LoadedFile {
        name,
        bytes,
        decoded_bytes: bytes,
        load_ms: end - t0,
        parse_ms: end - t0,
        first_bytes_ms: 0.0,
        model_ms: end - t0,
        workers: 0,
        preview: false,
        content: Content::Trace(Box::new(tf)),
    })
}

/// Every digest among `files` (headers and tables), in header order; a Parquet file no header
/// lists is reported, not ignored.
pub async fn load_digests(files: Vec<web_sys::File>) -> (Vec<LoadedFile>, Vec<Error>) {
    let (headers, parts): (Vec<_>, Vec<_>) = files
        .into_iter()
        .partition(|f| f.name().to_ascii_lowercase().ends_with(HEADER_SUFFIX));
    let tables: HashMap<String, web_sys::File> = parts.into_iter().map(|f| (f.name(), f)).collect();
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for h in &headers {
        match one(h, &tables).await {
            Ok(l) => ok.push(l),
            Err(e) => errors.push(e),
        }
    }
    if headers.is_empty() {
        for name in tables.keys() {
            errors.push(
                Error::new(
                    ErrorKind::Incompatible(
                        "a Parquet file is opened as part of a digest: pick it with its .digest.json".into(),
                    ),
                    0,
                )
                .in_file(name),
            );
        }
    }
    (ok, errors)
}
