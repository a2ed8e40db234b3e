//! Turning a drop or a folder pick into a list of files: dropped folders are walked recursively
//! (`webkitGetAsEntry`); [`looks_openable`] says which files look like profiler output, so
//! dropping a `tensorboard_trace_handler` log directory opens its rank files and skips the rest.

use js_sys::{Array, Function, Promise};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// File names worth opening: traces, snapshots, memory timelines, execution traces, digests
/// (`.digest.json` and their `.parquet` tables), and Flight Recorder dumps, which torch names
/// `<prefix><rank>` with no extension (`rank_3`, `nccl_trace_rank_12`).
pub fn looks_openable(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let base = n.rsplit('/').next().unwrap_or(&n);
    [".json", ".json.gz", ".gz", ".pickle", ".pkl", ".parquet"]
        .iter()
        .any(|e| n.ends_with(e))
        || (!base.contains('.') && base.ends_with(|c: char| c.is_ascii_digit()))
}

/// Entries of a drop, taken synchronously (the `DataTransfer` is emptied after the event).
pub fn entries(dt: &web_sys::DataTransfer) -> Vec<web_sys::FileSystemEntry> {
    let items = dt.items();
    (0..items.length())
        .filter_map(|i| items.get(i))
        .filter_map(|it| it.webkit_get_as_entry().ok().flatten())
        .collect()
}

async fn file_of(entry: &web_sys::FileSystemFileEntry) -> Option<web_sys::File> {
    let p = Promise::new(&mut |resolve, reject| {
        entry.file_with_callback_and_callback(&resolve, &reject)
    });
    JsFuture::from(p).await.ok()?.dyn_into().ok()
}

/// One batch of a directory's entries (`readEntries` returns them in batches until empty).
async fn read_batch(reader: &web_sys::FileSystemDirectoryReader) -> Vec<web_sys::FileSystemEntry> {
    let p = Promise::new(&mut |resolve: Function, reject: Function| {
        let _ = reader.read_entries_with_callback_and_callback(&resolve, &reject);
    });
    match JsFuture::from(p).await {
        Ok(v) => Array::from(&v)
            .iter()
            .filter_map(|e| e.dyn_into().ok())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Every file under the dropped entries, folders walked depth-first, sorted by path (the caller
/// keeps the openable ones and names the rest as skipped).
pub async fn collect_files(roots: Vec<web_sys::FileSystemEntry>) -> Vec<web_sys::File> {
    collect_paths(roots)
        .await
        .into_iter()
        .map(|(_, f)| f)
        .collect()
}

/// A picked file's path under the folder picked (`webkitRelativePath`: `runs/0042/rank0.json`),
/// or its name when it was picked alone. web-sys has no binding for it, so it is read by name.
pub fn relative_path(f: &web_sys::File) -> String {
    js_sys::Reflect::get(f, &"webkitRelativePath".into())
        .ok()
        .and_then(|v| v.as_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| f.name())
}

/// [`collect_files`] with each file's path in the drop (`/runs/0042/rank0.json`), for a trend
/// whose runs are the dropped folder's entries.
pub async fn collect_paths(roots: Vec<web_sys::FileSystemEntry>) -> Vec<(String, web_sys::File)> {
    let mut stack = roots;
    let mut out: Vec<(String, web_sys::File)> = Vec::new();
    // Bounded: a drop of a huge tree must not hang the page.
    let mut budget = 10_000;
    while let Some(e) = stack.pop() {
        budget -= 1;
        if budget == 0 {
            break;
        }
        if e.is_directory() {
            let Ok(dir) = e.dyn_into::<web_sys::FileSystemDirectoryEntry>() else {
                continue;
            };
            let reader = dir.create_reader();
            loop {
                let batch = read_batch(&reader).await;
                if batch.is_empty() {
                    break;
                }
                stack.extend(batch);
            }
        } else {
            let path = e.full_path();
            let Ok(fe) = e.dyn_into::<web_sys::FileSystemFileEntry>() else {
                continue;
            };
            if let Some(f) = file_of(&fe).await {
                out.push((path, f));
            }
        }
    }
    tracelight_core::sort::by(&mut out, |a, b| a.0.cmp(&b.0));
    out
}
