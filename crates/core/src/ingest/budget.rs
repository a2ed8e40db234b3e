//! Whether a file's model fits a browser tab.
//!
//! wasm32 linear memory ends at 4 GiB (65,536 pages of 64 KiB) in every browser, and it only grows:
//! a load that runs past it fails inside an allocation, the module traps and the tab's app is dead,
//! the trace already open included. The web adapter asks [`check_fits`] before each slice: the
//! memory already in use plus what the rest of the file will add, at the worst model size per
//! decoded byte measured (BENCHMARKS.md: 0.50× synthetic, 0.60-0.70× real H100 traces, after the
//! load), must stay under the ceiling with room for the timeline index. A file that will not fit is
//! refused at once with a message that points to the CLI, which has no such limit. A file read by
//! workers is judged before its first byte by [`check_fits_in_workers`]: the worker that merges
//! the shards has its own instance with the same ceiling, and holds more than the page at its
//! peak.

use crate::error::{Error, ErrorKind, Result};

/// The most linear memory a wasm32 module can have.
pub const WASM_MEMORY_MAX: u64 = 4 << 30;

/// Headroom kept free below [`WASM_MEMORY_MAX`]: the timeline index and the views' allocations.
pub const HEADROOM: u64 = 384 << 20;

/// Model bytes per decoded input byte, the worst measured (0.70×) plus a margin.
pub const MODEL_PER_DECODED_BYTE: f64 = 0.75;

/// Refuses the load when memory in use (`memory_now`) plus the model of the bytes still to come
/// would pass the ceiling. `raw_done`/`raw_total` are file bytes (compressed for a `.gz`);
/// `decoded_done` the bytes inflated from them, whose ratio estimates the rest (1 until known).
pub fn check_fits(
    memory_now: u64,
    raw_done: u64,
    raw_total: Option<u64>,
    decoded_done: u64,
) -> Result<()> {
    let limit = WASM_MEMORY_MAX - HEADROOM;
    let inflation = if raw_done > 0 {
        (decoded_done as f64 / raw_done as f64).max(1.0)
    } else {
        1.0
    };
    let rest = raw_total.unwrap_or(0).saturating_sub(raw_done) as f64;
    let projected = memory_now as f64 + rest * inflation * MODEL_PER_DECODED_BYTE;
    if memory_now <= limit && projected <= limit as f64 {
        return Ok(());
    }
    // Before the first byte the refusal is about the whole file, not a place in it.
    Err(too_big(
        projected.max(memory_now as f64),
        Ceiling::Page,
        (raw_done > 0).then_some(raw_done),
    ))
}

/// The page's wasm memory per byte of a file read by workers: it decodes the finished model and
/// indexes its timeline, nothing more. Measured in headless Chromium (BENCHMARKS.md): 0.26-0.28x
/// on synthetic traces of 304 MB to 10.5 GB, 0.25x on an 87 MB real one, 0.32-0.40x on real ones
/// of 35 MB, where the page's ~10 MB at start (counted in `memory_now`) weighs most; the rest is
/// a margin. Files denser than these (0.74x for 94-byte events) run the merging worker out first.
pub const PAGE_PER_DECODED_BYTE_IN_WORKERS: f64 = 0.35;

/// Worker 0's wasm memory per byte of the file at its peak, where it merges (files under
/// [`MERGER_FROM_BYTES`]): it reads its shard, merges the others, finishes the model and runs the
/// analyses, in its own instance whose memory starts empty and never shrinks. Measured: 0.43x on
/// a 1 GB synthetic trace, 0.47-0.79x on real ones of 35-87 MB (its 64 MiB prefaulted at start
/// weighs most there); the rest is a margin. It is above the page's on every file measured, so a
/// file denser than these estimates runs the worker out of memory first, which ends the load with
/// a message, and never the page, whose trap would lose the session open in it.
pub const MERGING_WORKER_PER_DECODED_BYTE: f64 = 0.8;

/// Files this big or bigger are merged by a worker that parses nothing (the web adapter's
/// `merger`), whose peak is [`MERGER_PER_DECODED_BYTE`].
pub const MERGER_FROM_BYTES: u64 = 2_000_000_000;

/// That merging worker's wasm memory per byte of the file at its peak: the analyses, after the
/// model is read back into its instance. Measured 0.39x on synthetic traces of 1 GB and 10.5 GB
/// (4.12 GB). A denser file (1.50x on one of 94-byte events without args) runs this worker out of
/// memory before the page (0.74x there), and the load ends with a message.
pub const MERGER_PER_DECODED_BYTE: f64 = 0.40;

/// The model's memory grows with its slices as much as with the file's bytes: a file of small
/// events holds more per byte. Each per-byte factor above is the worst measured on traces of
/// ~500 bytes per slice (the synthetic ones; real traces carry as many args); with a sample of
/// the file's slices per byte ([`slice_density`]) the estimate is also at least `base + per_slice
/// × slices per byte`, fitted through that and a file of 94-byte `X` events without args (page
/// 0.74x, the merger 1.50x, worker 0 1.56x): below each per-byte factor by ~0.02 at 504 bytes a
/// slice, above the dense file's by ~0.03 at 94. Without it, such a file passed the estimate and
/// ran the merger out of memory half-way (3.2 GB, refused after 26 s).
struct PerSlice {
    base: f64,
    per_slice: f64,
}

impl PerSlice {
    /// Through (1/504, `at_504`) and (1/94, `at_94`).
    const fn through(at_504: f64, at_94: f64) -> PerSlice {
        let per_slice = (at_94 - at_504) / (1.0 / 94.0 - 1.0 / 504.0);
        PerSlice {
            base: at_504 - per_slice / 504.0,
            per_slice,
        }
    }

    fn per_byte(&self, floor: f64, slices_per_byte: Option<f64>) -> f64 {
        slices_per_byte.map_or(floor, |d| floor.max(self.base + self.per_slice * d))
    }
}

const PAGE_PER_SLICE: PerSlice =
    PerSlice::through(PAGE_PER_DECODED_BYTE_IN_WORKERS - 0.02, 0.74 + 0.03);
const MERGER_PER_SLICE: PerSlice = PerSlice::through(MERGER_PER_DECODED_BYTE - 0.02, 1.50 + 0.03);
const WORKER0_PER_SLICE: PerSlice = PerSlice::through(0.43 + 0.02, 1.56 + 0.03);

/// Slices per byte in `samples` (pieces of the file: a few hundred KB from its middle), counted
/// as the `"ph"` keys whose value is `"X"` or `"B"`; `None` when the samples hold fewer than
/// 64 KiB. A piece cut inside a key misses one slice at most.
pub fn slice_density(samples: &[&[u8]]) -> Option<f64> {
    let bytes: usize = samples.iter().map(|s| s.len()).sum();
    if bytes < 64 << 10 {
        return None;
    }
    let mut slices = 0usize;
    for s in samples {
        for at in memchr::memmem::find_iter(s, b"\"ph\"") {
            let rest = &s[at + 4..];
            let mut v = rest.iter().copied().skip_while(u8::is_ascii_whitespace);
            if v.next() != Some(b':') {
                continue;
            }
            let mut v = v.skip_while(u8::is_ascii_whitespace);
            if v.next() == Some(b'"')
                && matches!(v.next(), Some(b'X' | b'B'))
                && v.next() == Some(b'"')
            {
                slices += 1;
            }
        }
    }
    Some(slices as f64 / bytes as f64)
}

/// Headroom below [`WASM_MEMORY_MAX`] in a reader worker, which draws nothing.
pub const WORKER_HEADROOM: u64 = 64 << 20;

/// [`check_fits`] for a file of `decoded_total` bytes read by workers: the page's memory
/// (`memory_now`, plus the model it decodes) and the merging worker's must both stay under their
/// ceilings, so a file either would overflow is refused before any byte is read. `merger`: the
/// shards are merged by a worker that parses nothing (from [`MERGER_FROM_BYTES`]).
/// `slices_per_byte`: the file's density where sampled ([`slice_density`]).
pub fn check_fits_in_workers(
    memory_now: u64,
    decoded_total: u64,
    merger: bool,
    slices_per_byte: Option<f64>,
) -> Result<()> {
    let page_per_byte = PAGE_PER_SLICE.per_byte(PAGE_PER_DECODED_BYTE_IN_WORKERS, slices_per_byte);
    let page = memory_now as f64 + decoded_total as f64 * page_per_byte;
    if memory_now > WASM_MEMORY_MAX - HEADROOM || page > (WASM_MEMORY_MAX - HEADROOM) as f64 {
        return Err(too_big(page.max(memory_now as f64), Ceiling::Page, None));
    }
    let per_byte = if merger {
        MERGER_PER_SLICE.per_byte(MERGER_PER_DECODED_BYTE, slices_per_byte)
    } else {
        WORKER0_PER_SLICE.per_byte(MERGING_WORKER_PER_DECODED_BYTE, slices_per_byte)
    };
    let worker = decoded_total as f64 * per_byte;
    if worker > (WASM_MEMORY_MAX - WORKER_HEADROOM) as f64 {
        return Err(too_big(worker, Ceiling::Worker, None));
    }
    Ok(())
}

/// Whose memory would run out.
enum Ceiling {
    /// The page's instance, which keeps [`HEADROOM`] for the views.
    Page,
    /// The reader worker that merges the shards, which keeps [`WORKER_HEADROOM`].
    Worker,
}

fn too_big(need: f64, who: Ceiling, at: Option<u64>) -> Error {
    let gb = |b: f64| b / 1e9;
    let (limit, whose) = match who {
        Ceiling::Page => (
            WASM_MEMORY_MAX - HEADROOM,
            "a tab can give it (WebAssembly memory ends at {end} GB and the views need the rest)",
        ),
        Ceiling::Worker => (
            WASM_MEMORY_MAX - WORKER_HEADROOM,
            "the reader worker that builds it can give it (WebAssembly memory ends at {end} GB in \
             each worker too)",
        ),
    };
    let whose = whose.replace("{end}", &format!("{:.1}", gb(WASM_MEMORY_MAX as f64)));
    Error::new(
        ErrorKind::Limit(format!(
            "too big for a browser tab: its model would need about {:.2} GB of WebAssembly \
             memory, more than the {:.2} GB {whose}. Nothing was lost: the trace already open \
             stays. Open this file with the command-line tool instead: `tracelight summary FILE` \
             (or `analyze FILE --json`), which has no such limit",
            gb(need),
            gb(limit as f64),
        )),
        at.unwrap_or(crate::error::WHOLE_FILE),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn a_plain_file_is_judged_by_its_size_before_any_byte_is_read() {
        // 2 GB opens today with 1.24 GB of wasm memory: it must pass.
        assert!(check_fits(60 << 20, 0, Some(2_000_000_000), 0).is_ok());
        // 4.5 GB * 0.75 = 3.4 GB + 60 MB is under 4 GiB - 384 MiB = 3.9 GB.
        assert!(check_fits(60 << 20, 0, Some(4_500_000_000), 0).is_ok());
        // 5.5 GB * 0.75 = 4.1 GB: refused before the first byte.
        let e = check_fits(60 << 20, 0, Some(5_500_000_000), 0).unwrap_err();
        assert!(matches!(&e.kind, ErrorKind::Limit(m) if m.contains("tracelight summary")));
        assert!(!e.to_string().contains("at byte"), "{e}");
        // Once reading, the refusal says where it came.
        let e = check_fits(80 << 20, 10_000_000, Some(600_000_000), 100_000_000).unwrap_err();
        assert!(e.to_string().ends_with("(at byte 10000000)"), "{e}");
    }

    #[test]
    fn near_the_ceiling_the_message_shows_need_above_what_a_tab_gives() {
        // 5.2 GB * 0.75 = 3.90 GB needed; 4 GiB - 384 MiB = 3,892,314,112 B = 3.89 GB available.
        // (In one decimal both read 3.9 GB, which made the refusal look arbitrary.)
        let e = check_fits(0, 0, Some(5_200_000_000), 0).unwrap_err();
        let ErrorKind::Limit(m) = &e.kind else {
            panic!("{e}")
        };
        assert!(
            m.contains("about 3.90 GB of WebAssembly memory, more than the 3.89 GB"),
            "{m}"
        );
        assert!(m.contains("ends at 4.3 GB"), "{m}");
    }

    #[test]
    fn a_gzip_file_is_judged_by_its_inflation_so_far() {
        // 600 MB of .gz: fits until the first 10 MB show a 10x inflation (6 GB decoded).
        assert!(check_fits(60 << 20, 0, Some(600_000_000), 0).is_ok());
        assert!(check_fits(80 << 20, 10_000_000, Some(600_000_000), 100_000_000).is_err());
        // Memory already past the limit is refused whatever the projection.
        assert!(check_fits(WASM_MEMORY_MAX - (100 << 20), 1, Some(2), 1).is_err());
    }

    #[test]
    fn a_file_read_by_workers_must_fit_the_page_and_the_merging_worker() {
        // 5.25 GB merged by worker 0: the page needs 60 MB + 1.84 GB, worker 0 4.20 GB of the
        // 4.23 GB it may use: both fit (the page's own reader would refuse it: 5.25 * 0.75 = 3.94).
        assert!(check_fits_in_workers(60 << 20, 5_250_000_000, false, None).is_ok());
        assert!(check_fits(60 << 20, 0, Some(5_250_000_000), 0).is_err());
        // 5.35 GB: the page would fit, worker 0 not (4.28 GB).
        let e = check_fits_in_workers(60 << 20, 5_350_000_000, false, None).unwrap_err();
        let ErrorKind::Limit(m) = &e.kind else {
            panic!("{e}")
        };
        assert!(
            m.contains(
                "about 4.28 GB of WebAssembly memory, more than the 4.23 GB the reader worker"
            ),
            "{m}"
        );
        // Refused before any byte is read: the message names no place in the file.
        assert_eq!(e.offset, crate::error::WHOLE_FILE);
        let text = e.in_file("big.json").to_string();
        assert!(
            text.starts_with("big.json: limit exceeded: too big"),
            "{text}"
        );
        assert!(!text.contains("at byte"), "{text}");
        // Merged by a worker that parses nothing, 10.5 GB fits: the page 60 MB + 3.68 GB, the
        // merger 4.20 GB; 10.6 GB is past the merger's 4.23 GB (4.24 GB).
        assert!(check_fits_in_workers(60 << 20, 10_500_000_000, true, None).is_ok());
        let e = check_fits_in_workers(60 << 20, 10_600_000_000, true, None).unwrap_err();
        assert!(
            matches!(&e.kind, ErrorKind::Limit(m) if m.contains("about 4.24 GB")),
            "{e}"
        );
        // The page's limit binds where its memory is already in use: 3.7 GB + 0.35 GB.
        let e = check_fits_in_workers(3_700_000_000, 1_000_000_000, false, None).unwrap_err();
        assert!(
            matches!(&e.kind, ErrorKind::Limit(m) if m.contains("about 4.05 GB")),
            "{e}"
        );
    }

    /// Events as Kineto writes them (one a line) and as a minifier does, `B`/`E` pairs, flows,
    /// instants and metadata: only `X` and `B` are slices.
    #[test]
    fn slice_density_counts_x_and_b_events() {
        let mut t = String::new();
        for k in 0..300 {
            t.push_str(&format!(
                "  {{\"ph\": \"X\", \"name\": \"op{k}\", \"ts\": {k}, \"dur\": 1}},\n"
            ));
            t.push_str("{\"ph\":\"B\",\"ts\":1},{\"ph\" : \"E\",\"ts\":2},");
            t.push_str("{\"ph\": \"s\", \"id\": 1}, {\"ph\": \"i\"}, {\"ph\": \"M\", \"args\": {\"name\": \"X\"}},\n");
        }
        let big = t.repeat(2);
        let d = slice_density(&[big.as_bytes(), t.as_bytes()]).unwrap();
        let want = 3.0 * 600.0 / (3 * t.len()) as f64;
        assert!((d - want).abs() < 1e-12, "{d} {want}");
        assert_eq!(
            slice_density(&[b"{\"ph\": \"X\"}"]),
            None,
            "too small a sample"
        );
    }

    /// A file of the synthetic traces' density (504 bytes a slice) is judged as before; a file of
    /// 94-byte events is judged by its slices: the 3.2 GB file that ran the merger out half-way
    /// is refused before its first byte, and 1.5 GB of them still opens (worker 0 merges).
    #[test]
    fn a_dense_file_is_judged_by_its_slices() {
        let synthetic = Some(1.0 / 504.0);
        assert!(check_fits_in_workers(60 << 20, 10_480_000_000, true, synthetic).is_ok());
        assert!(check_fits_in_workers(60 << 20, 10_600_000_000, true, synthetic).is_err());
        assert!(check_fits_in_workers(60 << 20, 5_250_000_000, false, synthetic).is_ok());
        let dense = Some(1.0 / 94.0);
        let e = check_fits_in_workers(60 << 20, 3_200_000_000, true, dense).unwrap_err();
        assert!(
            matches!(&e.kind, ErrorKind::Limit(m) if m.contains("about 4.90 GB") && m.contains("reader worker")),
            "{e}"
        );
        assert!(check_fits_in_workers(60 << 20, 3_200_000_000, true, None).is_ok());
        assert!(check_fits_in_workers(60 << 20, 1_500_000_000, false, dense).is_ok());
        // The fit is above each measured figure and below each per-byte factor where it is one.
        assert!(MERGER_PER_SLICE.per_byte(0.0, dense) >= 1.50);
        assert!(PAGE_PER_SLICE.per_byte(0.0, dense) >= 0.74);
        assert!(WORKER0_PER_SLICE.per_byte(0.0, dense) >= 1.56);
        assert!(MERGER_PER_SLICE.per_byte(0.0, synthetic) < MERGER_PER_DECODED_BYTE);
        assert!(PAGE_PER_SLICE.per_byte(0.0, synthetic) < PAGE_PER_DECODED_BYTE_IN_WORKERS);
    }
}
