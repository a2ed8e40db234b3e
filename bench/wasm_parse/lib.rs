//! Exports for `bench/wasm_parse.mjs`: a buffer to copy the file into, and one parse of it.

use tracelight_core::ingest::kineto::KinetoReader;

/// A buffer of `len` bytes the caller fills and passes to [`parse`]; never freed (one per run).
#[no_mangle]
pub extern "C" fn buffer(len: usize) -> *mut u8 {
    let mut v = vec![0u8; len];
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Reads the `len` bytes at `ptr` in 4 MiB pushes, as a reader worker does; with bit 0 of `mode`
/// also builds the model (sort, nesting, flows), with bit 1 leaves a slice's display-only args in
/// the file as the page's reader workers do (`KinetoReader::leave_args_in_file`). Returns the
/// events read (0 on an error).
#[no_mangle]
pub extern "C" fn parse(ptr: *const u8, len: usize, mode: u32) -> u64 {
    let Some(r) = read(ptr, len, mode) else { return 0 };
    let n = r.events();
    if mode & 1 != 0 && r.finish().is_err() {
        return 0;
    }
    n
}

/// The reader after every byte at `ptr` was pushed (`mode` as in [`parse`]); `None` on an error.
fn read(ptr: *const u8, len: usize, mode: u32) -> Option<KinetoReader> {
    // The workspace denies `unsafe`; this bench crate is outside it.
    // SAFETY: the caller passes a buffer from `buffer(len)`, which is `len` initialized bytes.
    let b = unsafe { std::slice::from_raw_parts(ptr, len) };
    let mut r = KinetoReader::new();
    if mode & 2 != 0 {
        r.leave_args_in_file();
    }
    for piece in b.chunks(4 << 20) {
        r.push(piece).ok()?;
    }
    Some(r)
}

/// Reads the `len` bytes at `ptr` as a memory snapshot in 4 MiB pushes (the snapshot worker's
/// path); with `views` 1 also builds the views the worker sends the page (summary, charts, flame
/// graphs) and their sections. Returns the snapshot's trace entries (0 on an error).
#[no_mangle]
pub extern "C" fn snapshot(ptr: *const u8, len: usize, views: u32) -> u64 {
    use tracelight_core::ingest::{Loaded, Loader};
    // SAFETY: as in `parse`.
    let b = unsafe { std::slice::from_raw_parts(ptr, len) };
    let mut l = Loader::new("snapshot");
    l.size_hint(len as u64);
    for piece in b.chunks(4 << 20) {
        if l.push(piece).is_err() {
            return 0;
        }
    }
    let Ok(Loaded::Snapshot(snap)) = l.finish() else {
        return 0;
    };
    let n = snap.records().max(1);
    if views == 1 {
        let v = tracelight_core::report::snapshot_wire::SnapshotViews::of(&snap);
        let s = tracelight_core::report::snapshot_wire::sections(&v);
        if s.is_err() {
            return 0;
        }
    }
    n
}

/// The reader [`read_only`] left for [`finish_only`]: the model's finish timed alone.
static HELD: std::sync::Mutex<Option<KinetoReader>> = std::sync::Mutex::new(None);

/// Reads the `len` bytes at `ptr` as [`parse`] does (bit 1 of `mode` as there) and keeps the
/// reader for [`finish_only`]. Returns the events read (0 on an error).
#[no_mangle]
pub extern "C" fn read_only(ptr: *const u8, len: usize, mode: u32) -> u64 {
    let Some(r) = read(ptr, len, mode) else { return 0 };
    let n = r.events();
    let Ok(mut held) = HELD.lock() else { return 0 };
    *held = Some(r);
    n
}

/// Finishes the reader [`read_only`] kept (sort, nesting, flows); the slices in the model, 0
/// on an error.
#[no_mangle]
pub extern "C" fn finish_only() -> u64 {
    let Some(r) = HELD.lock().ok().and_then(|mut h| h.take()) else {
        return 0;
    };
    r.finish().map_or(0, |t| t.slices.len() as u64)
}

/// The first half of the file read and the second half's shard sections made by [`split_only`],
/// for [`merge_only`].
static SPLIT: std::sync::Mutex<Option<(KinetoReader, u64, bool, Vec<Vec<u8>>)>> =
    std::sync::Mutex::new(None);

/// Reads the `len` bytes at `ptr` as two workers do (args left in the file): the first half in
/// one reader, the second as a shard whose sections are made and kept for [`merge_only`].
/// Returns the cut's offset (0 on an error).
#[no_mangle]
pub extern "C" fn split_only(ptr: *const u8, len: usize) -> u64 {
    use tracelight_core::ingest::kineto::{cut::find_cut_forward, first_byte};
    // SAFETY: as in `parse`.
    let b = unsafe { std::slice::from_raw_parts(ptr, len) };
    let Some(cut) = find_cut_forward(b, len / 2) else { return 0 };
    let bare = first_byte(b) == Some(b'[');
    let mut a = KinetoReader::new();
    a.leave_args_in_file();
    for piece in b[..cut].chunks(4 << 20) {
        if a.push(piece).is_err() {
            return 0;
        }
    }
    let mut s = KinetoReader::shard(cut as u64, bare);
    s.leave_args_in_file();
    for piece in b[cut..].chunks(4 << 20) {
        if s.push(piece).is_err() {
            return 0;
        }
    }
    // The status section (no error), then the shard's.
    let Some(mut secs) = s.to_sections() else { return 0 };
    let mut status = Vec::new();
    tracelight_core::model::wire::Wire::put(&None::<tracelight_core::Error>, &mut status);
    secs.insert(0, status);
    let Ok(mut held) = SPLIT.lock() else { return 0 };
    *held = Some((a, cut as u64, bare, secs));
    cut as u64
}

/// Merges the shard [`split_only`] kept into its first half, as the merging worker does; the
/// events then read, 0 on an error.
#[no_mangle]
pub extern "C" fn merge_only() -> u64 {
    let Some((mut a, cut, bare, secs)) = SPLIT.lock().ok().and_then(|mut h| h.take()) else {
        return 0;
    };
    let refs: Vec<&[u8]> = secs.iter().map(Vec::as_slice).collect();
    match a.merge_sections(cut, bare, &refs) {
        Ok(tracelight_core::ingest::kineto::Merge::Merged) => a.events(),
        _ => 0,
    }
}
