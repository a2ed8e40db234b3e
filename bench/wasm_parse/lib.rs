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

/// The file's first shard read and the others' sections made by [`split_only`], each with
/// its cut, for [`merge_only`].
type Split = (KinetoReader, bool, Vec<(u64, Vec<Vec<u8>>)>);
static SPLIT: std::sync::Mutex<Option<Split>> = std::sync::Mutex::new(None);

/// Reads the `len` bytes at `ptr` as `k` workers do (args left in the file): the first of `k`
/// shards in one reader, each other shard read alone and its sections made and kept for
/// [`merge_only`]. Returns the first cut's offset (0 on an error).
#[no_mangle]
pub extern "C" fn split_only(ptr: *const u8, len: usize, k: usize) -> u64 {
    use tracelight_core::ingest::kineto::{cut::find_cut_forward, first_byte};
    // SAFETY: as in `parse`.
    let b = unsafe { std::slice::from_raw_parts(ptr, len) };
    let k = k.max(2);
    let mut cuts = vec![0];
    for i in 1..k {
        let Some(c) = find_cut_forward(b, len * i / k) else { return 0 };
        cuts.push(c.max(*cuts.last().unwrap_or(&0)));
    }
    cuts.push(len);
    let bare = first_byte(b) == Some(b'[');
    let mut first = KinetoReader::new();
    first.leave_args_in_file();
    for piece in b[..cuts[1]].chunks(4 << 20) {
        if first.push(piece).is_err() {
            return 0;
        }
    }
    let mut shards = Vec::new();
    for w in cuts[1..].windows(2) {
        let mut s = KinetoReader::shard(w[0] as u64, bare);
        s.leave_args_in_file();
        for piece in b[w[0]..w[1]].chunks(4 << 20) {
            if s.push(piece).is_err() {
                return 0;
            }
        }
        // The status section (no error), then the shard's.
        let Some(mut secs) = s.to_sections() else { return 0 };
        let mut status = Vec::new();
        tracelight_core::model::wire::Wire::put(&None::<tracelight_core::Error>, &mut status);
        secs.insert(0, status);
        shards.push((w[0] as u64, secs));
    }
    let Ok(mut held) = SPLIT.lock() else { return 0 };
    *held = Some((first, bare, shards));
    cuts[1] as u64
}

/// Merges the shards [`split_only`] kept into the first, in order, as the merging worker does;
/// with `finish` 1 then finishes the model. The events read, 0 on an error.
#[no_mangle]
pub extern "C" fn merge_only(finish: u32) -> u64 {
    let Some((mut a, bare, shards)) = SPLIT.lock().ok().and_then(|mut h| h.take()) else {
        return 0;
    };
    for (cut, secs) in shards {
        let refs: Vec<&[u8]> = secs.iter().map(Vec::as_slice).collect();
        match a.merge_sections(cut, bare, &refs) {
            Ok(tracelight_core::ingest::kineto::Merge::Merged) => {}
            _ => return 0,
        }
    }
    let n = a.events();
    if finish == 1 && a.finish().is_err() {
        return 0;
    }
    n
}
