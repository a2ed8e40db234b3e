//! The sharded reader (the stream cut into parts read on their own, then merged) builds exactly
//! the one-thread reader's model — every column, string, args text, table, warning and error —
//! wherever the cuts fall: at every byte of hand-built traces that put B/E pairs, flows, string
//! ids, counters, metadata, top-level keys and warnings on both sides of a cut; at event boundaries
//! and arbitrary bytes of every Kineto trace in the corpus; and through the thread pool the CLI
//! uses. The one-thread reader is the reference here: its own tests check it against torch, HTA
//! and python's json module.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{assert_same_model, kineto_corpus as corpus};
use tracelight_core::ingest::kineto::cut::find_cut;
use tracelight_core::ingest::kineto::{read_in_shards, read_kineto};
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::model::Trace;
use tracelight_core::Result;

/// B/E pairs and a flow with a string id across cuts, counters, memory and plain instants,
/// metadata given twice (the later wins), top-level keys after `traceEvents`, and warnings whose
/// kinds' order depends on an `E` matched only across a cut.
const TRICKY: &str = r#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU", "totalGlobalMem": 100}],
 "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "first"}},
  {"ph": "M", "name": "process_sort_index", "pid": 7, "tid": 0, "args": {"sort_index": 5}},
  {"ph": "M", "name": "thread_sort_index", "pid": 7, "tid": 1, "args": {"sort_index": 9}},
  {"ph": "B", "name": "outer", "cat": "user_annotation", "pid": 7, "tid": 1, "ts": 10.0},
  {"ph": "B", "name": "closed later", "pid": 7, "tid": 3, "ts": 10.1},
  {"ph": "B", "name": "inner", "cat": "user_annotation", "pid": 7, "tid": 1, "ts": 10.25, "args": {"k": [1, {"x": "}, {"}]}},
  {"ph": "s", "id": "abc", "cat": "fwdbwd", "pid": 7, "tid": 1, "ts": 10.5, "name": "fb"},
  {"ph": "E", "pid": 7, "tid": 1, "ts": 12.0},
  {"ph": "X", "name": "bad ts", "pid": 7, "tid": 1, "ts": "NaN", "dur": 1},
  {"ph": "C", "name": "mem", "pid": 7, "ts": 12, "args": {"used": 5, "free": 3}},
  {"ph": "i", "name": "[memory]", "pid": 7, "tid": 1, "ts": 13, "args": {"Device Type": 1, "Device Id": 0, "Addr": 5, "Bytes": 64, "Total Allocated": 64, "Total Reserved": 128}},
  {"ph": "i", "name": "mark", "s": "t", "pid": 7, "tid": 1, "ts": 13.5, "args": {"note": "a \"quoted\" {brace}", "Ev Idx": 3}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": "stream 7", "ts": 14, "dur": 1,
   "args": {"device": 0, "stream": 7, "correlation": 3, "grid": [1, 1, 1], "block": [32, 1, 1], "queued": 0}},
  {"ph": "f", "id": "abc", "cat": "fwdbwd", "pid": 7, "tid": 1, "ts": 25.5, "bp": "e", "name": "fb"},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 1, "ts": 13.9, "dur": 0.5, "args": {"correlation": 3, "cbid": 211, "Ev Idx": 4}},
  {"ph": "C", "name": "mem", "pid": 7, "ts": 15, "args": {"used": 6, "free": 2}},
  {"ph": "E", "pid": 7, "tid": 1, "ts": 30.0},
  {"ph": "E", "pid": 7, "tid": 1, "ts": 31.0},
  5,
  {"ph": "Q", "pid": 7, "tid": 1, "ts": 1},
  {"ph": "X", "name": "twice", "name": "again", "cat": "cpu_op", "pid": 7, "tid": 1, "ts": 25, "dur": 1, "args": {"External id": 9, "Input Dims": [[2, 3]], "Sequence number": 4}},
  {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "second"}},
  {"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "main"}},
  {"ph": "M", "name": "thread_sort_index", "pid": 7, "tid": 1, "args": {"sort_index": 3}},
  {"ph": "M", "name": "process_sort_index", "pid": 7, "tid": 0, "args": {"sort_index": 2}},
  {"ph": "X", "name": "no dur", "cat": "cpu_op", "pid": "host", "tid": "25738", "ts": 40},
  {"ph": "B", "name": "left open", "pid": 8, "tid": 8, "ts": 41},
  {"ph": "E", "pid": 7, "tid": 3, "ts": 42},
  {"ph": "B", "name": "left open too", "pid": 7, "tid": 3, "ts": 43},
 ],
 "traceName": "t", "displayTimeUnit": "ns", "baseTimeNanoseconds": 5,
 "distributedInfo": {"rank": 1, "world_size": 2, "backend": "nccl"}
}"#;

/// An `E` matched only across a cut, then another kind of warning, then an `E` with nothing open:
/// the one-thread reader lists the kinds in that order (bad time, then unmatched end).
const WARNING_ORDER: &str = r#"{"traceEvents": [
  {"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 1},
  {"ph": "E", "pid": 1, "tid": 1, "ts": 2},
  {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": "x", "dur": 1},
  {"ph": "E", "pid": 1, "tid": 1, "ts": 3},
  {"ph": "E", "pid": 1, "tid": 2, "ts": 4}
]}"#;

/// An `E` with nothing open (its warning kind comes first), then a bad time, then an `E` that
/// closes a `B` but has no usable time (its unmatched-end warning is counted at once).
const WARNING_ORDER_2: &str = r#"{"traceEvents": [
  {"ph": "E", "pid": 1, "tid": 9, "ts": 1},
  {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": "x", "dur": 1},
  {"ph": "B", "name": "c", "pid": 1, "tid": 1, "ts": 5},
  {"ph": "E", "pid": 1, "tid": 1, "ts": "y"}
]}"#;

/// A bare array (2020 files), minified.
const BARE: &str = r#"[{"ph":"X","cat":"Operator","name":"a","pid":1,"tid":1,"ts":1,"dur":5},{"ph":"X","cat":"Runtime","name":"b","pid":1,"tid":1,"ts":2,"dur":1,"args":{"correlation":7}},{"ph":"X","cat":"Kernel","name":"k","pid":0,"tid":"stream 7","ts":3,"dur":1,"args":{"correlation":7}}, {"ph":"s","id":7,"pid":1,"tid":1,"ts":2,"cat":"async","name":"f"},{"ph":"f","id":7,"pid":0,"tid":"stream 7","ts":3,"cat":"async","name":"f"}]"#;

/// Invalid JSON the one-thread reader reads anyway: a raw newline inside a name, followed by what
/// looks like the start of an event. A cut there is wrong; the merge must notice.
const RAW_NEWLINE: &str = "{\"traceEvents\": [\n  {\"ph\": \"X\", \"name\": \"a\n  {\\\"b\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},\n  {\"ph\": \"X\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": 1}\n]}";

fn one_thread(bytes: &[u8]) -> Result<Trace> {
    read_kineto(bytes)
}

/// The sharded result equals the one-thread result: the same model, or the same error. Returns
/// how many cuts were merged as event boundaries.
fn check(bytes: &[u8], cuts: &[usize], one: &Result<Trace>, what: &str) -> usize {
    let (sharded, merged) = read_in_shards(bytes, cuts);
    match (one, &sharded) {
        (Ok(a), Ok(b)) => assert_same_model(b, a, &format!("{what}, cuts {cuts:?}")),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}, cuts {cuts:?}"),
        (a, b) => panic!(
            "{what}, cuts {cuts:?}: one thread {:?}, sharded {:?}",
            a.as_ref()
                .map(|t| t.slices.len())
                .map_err(|e| e.to_string()),
            b.as_ref()
                .map(|t| t.slices.len())
                .map_err(|e| e.to_string()),
        ),
    }
    merged
}

/// A deterministic stream of numbers (no `rand` for tests).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn one_cut_anywhere_in_hand_built_traces_gives_the_one_thread_model() {
    let cut_short = &TRICKY[..TRICKY.find("\"left open\"").unwrap()];
    let broken = TRICKY.replace("\"ph\": \"Q\"", "\"ph\": ]");
    for (what, text) in [
        ("tricky", TRICKY),
        ("warning order", WARNING_ORDER),
        ("warning order 2", WARNING_ORDER_2),
        ("bare", BARE),
        ("raw newline", RAW_NEWLINE),
        ("truncated", cut_short),
        ("syntax error", &broken),
    ] {
        let bytes = text.as_bytes();
        let one = one_thread(bytes);
        let mut merged = 0;
        for c in 1..bytes.len() {
            merged += check(bytes, &[c], &one, what);
        }
        // Some cuts were event boundaries and merged (the rest read again in order): at least
        // one per event of these traces but the first, and never every byte.
        let events = text.matches("\"ph\"").count();
        assert!(
            merged >= events - 1 && merged < bytes.len() / 4,
            "{what}: {merged} merged"
        );
    }
    // The cases above hold what they claim.
    let t = one_thread(TRICKY.as_bytes()).unwrap();
    assert!(
        t.warnings
            .count(tracelight_core::warnings::WarningKind::UnmatchedEnd)
            >= 2
    );
    assert!(!t.flows.from.is_empty() && !t.counters.ts.is_empty() && !t.memory.ts.is_empty());
    assert_eq!(t.meta.trace_name.as_deref(), Some("t"));
    let order: Vec<_> = one_thread(WARNING_ORDER.as_bytes())
        .unwrap()
        .warnings
        .iter()
        .map(|w| w.kind)
        .collect();
    use tracelight_core::warnings::WarningKind::{BadTime, UnmatchedEnd};
    assert_eq!(order, [BadTime, UnmatchedEnd]);
    let order: Vec<_> = one_thread(WARNING_ORDER_2.as_bytes())
        .unwrap()
        .warnings
        .iter()
        .map(|w| w.kind)
        .collect();
    assert_eq!(order, [UnmatchedEnd, BadTime]);
    assert!(one_thread(broken.as_bytes()).is_err());
    assert_eq!(one_thread(RAW_NEWLINE.as_bytes()).unwrap().slices.len(), 2);
}

#[test]
fn many_cuts_at_once_give_the_one_thread_model() {
    let mut rng = Lcg(7);
    for text in [TRICKY, WARNING_ORDER, WARNING_ORDER_2, BARE, RAW_NEWLINE] {
        let bytes = text.as_bytes();
        let one = one_thread(bytes);
        for _ in 0..400 {
            let n = 2 + rng.below(6);
            let mut cuts: Vec<usize> = (0..n).map(|_| 1 + rng.below(bytes.len() - 1)).collect();
            cuts.sort_unstable();
            cuts.dedup();
            check(bytes, &cuts, &one, "many cuts");
        }
        // Every event boundary at once: each shard holds one event.
        let mut cuts = Vec::new();
        let mut end = bytes.len();
        while let Some(c) = find_cut(&bytes[..end], 1, usize::MAX) {
            cuts.push(c);
            end = c;
        }
        cuts.reverse();
        let merged = check(bytes, &cuts, &one, "every boundary");
        if text != RAW_NEWLINE {
            assert_eq!(merged, cuts.len(), "every boundary merged");
        }
    }
}

#[test]
fn cuts_at_event_boundaries_and_arbitrary_bytes_of_every_corpus_trace() {
    if tracelight_testkit::path("real").is_none() {
        return;
    }
    let mut rng = Lcg(11);
    for (rel, bytes) in corpus() {
        let one = one_thread(&bytes);
        assert!(one.is_ok(), "{rel}");
        // Event boundaries spread over the events (the cuts the sharded reader makes)...
        let events = bytes
            .windows(14)
            .position(|w| w == b"\"traceEvents\":")
            .map_or(0, |p| p + 14);
        let mut cuts = Vec::new();
        for k in 1..12 {
            let target = events + (bytes.len() - events) * k / 12;
            if let Some(c) = find_cut(&bytes[..target], events, 1 << 16) {
                cuts.push(c);
            }
        }
        cuts.dedup();
        // Kineto starts every event on a line: each such cut is a boundary, merged.
        assert_eq!(
            check(&bytes, &cuts, &one, &rel),
            cuts.len(),
            "{rel}: cuts merged"
        );
        // ...and cuts anywhere (inside strings, numbers, the header): read again in order.
        let blind: Vec<usize> = {
            let mut v: Vec<usize> = (0..3).map(|_| 1 + rng.below(bytes.len() - 1)).collect();
            v.sort_unstable();
            v
        };
        check(&bytes, &blind, &one, &rel);
    }
}

#[test]
fn the_thread_pool_reads_the_corpus_as_one_thread_does() {
    if tracelight_testkit::path("real").is_none() {
        return;
    }
    for (rel, bytes) in corpus() {
        let Ok(one) = one_thread(&bytes) else {
            panic!("{rel}")
        };
        // Shards of 64 KiB, pushed in 100 KB slices: tens of shards per file on three threads.
        let mut l = Loader::new("unknown").threads(3).shard_bytes(64 << 10);
        for piece in bytes.chunks(100_000) {
            l.push(piece).unwrap();
        }
        let Ok(Loaded::Trace(t)) = l.finish() else {
            panic!("{rel}")
        };
        assert_same_model(&t, &one, &rel);
    }
}

/// A model moved between wasm instances (`model::wire`, the page's reader workers) arrives whole:
/// every column, string, args text, table and warning.
#[test]
fn a_model_survives_its_wire_encoding() {
    let mut models = vec![("tricky".to_owned(), one_thread(TRICKY.as_bytes()).unwrap())];
    if tracelight_testkit::path("real").is_some() {
        for (rel, bytes) in corpus() {
            models.push((rel, one_thread(&bytes).unwrap()));
        }
    }
    for (what, t) in &models {
        let mut d = tracelight_core::model::wire::Decoder::default();
        for s in tracelight_core::model::wire::encode(t) {
            d.push(&s).unwrap();
        }
        assert_same_model(&d.finish().unwrap(), t, what);
    }
}

/// The page's workers: a shard read in one wasm instance reaches the merging one as sections
/// (`KinetoReader::to_sections` after a status) and merges exactly as in one process; a cut that
/// was not a boundary is reported, and the merging reader then reads the shard's bytes itself.
fn merged_through_sections(bytes: &[u8], cut: usize) -> (Result<Trace>, bool) {
    use tracelight_core::ingest::kineto::KinetoReader;
    let mut acc = KinetoReader::new();
    if let Err(e) = acc.push(&bytes[..cut]) {
        return (Err(e), false);
    }
    merge_rest(acc, bytes, cut)
}

/// A worker's sections of reader `r` after it read `part`: its status (`None`, or the error that
/// stopped it), then, without an error, the reader's.
fn shard_sections(
    r: &mut tracelight_core::ingest::kineto::KinetoReader,
    part: &[u8],
) -> Vec<Vec<u8>> {
    use tracelight_core::model::wire::Wire;
    let status = r.push(part).err();
    let mut s = Vec::new();
    status.put(&mut s);
    let mut all = vec![s];
    if status.is_none() {
        all.extend(r.to_sections().unwrap());
    }
    all
}

/// `acc`, the reader of `bytes[..cut]`, merges the shard from `cut` on through its sections (or
/// reads its bytes, where the cut was not an event boundary) and finishes; true when merged.
fn merge_rest(
    mut acc: tracelight_core::ingest::kineto::KinetoReader,
    bytes: &[u8],
    cut: usize,
) -> (Result<Trace>, bool) {
    use tracelight_core::ingest::kineto::{first_byte, KinetoReader, Merge};
    let bare = first_byte(bytes) == Some(b'[');
    let all = shard_sections(&mut KinetoReader::shard(cut as u64, bare), &bytes[cut..]);
    let refs: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
    let merged = match acc.merge_sections(cut as u64, bare, &refs) {
        Ok(Merge::Merged) => true,
        Ok(Merge::NotABoundary) => {
            if let Err(e) = acc.push(&bytes[cut..]) {
                return (Err(e), false);
            }
            false
        }
        Err(e) => return (Err(e), true),
    };
    (acc.finish(), merged)
}

#[test]
fn shards_merge_the_same_through_their_wire_sections() {
    let mut any = 0;
    for text in [TRICKY, WARNING_ORDER_2, BARE, RAW_NEWLINE] {
        let bytes = text.as_bytes();
        let one = one_thread(bytes);
        for c in 1..bytes.len() {
            let (r, merged) = merged_through_sections(bytes, c);
            any += usize::from(merged);
            match (&one, &r) {
                (Ok(a), Ok(b)) => assert_same_model(b, a, &format!("cut {c}")),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "cut {c}"),
                _ => panic!("cut {c}: one thread and sections disagree"),
            }
        }
    }
    assert!(any > 20, "{any} cuts merged");
}

/// A shard whose own read failed sends only its status section: the merge returns that error,
/// the one the one-thread reader stops at (the worker path once failed here, asking for the
/// sections of a shard that had none).
#[test]
fn a_shard_that_failed_gives_its_error_through_sections() {
    let text = "{\"traceEvents\":[\n  {\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2},\n  {\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":4,\"dur\":2},\n  {\"ph\": ], \"name\":\"x\",\"pid\":1,\"tid\":1,\"ts\":6,\"dur\":1},\n  {\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":8,\"dur\":2}\n]}\n";
    let bytes = text.as_bytes();
    let one = one_thread(bytes).unwrap_err().to_string();
    let broken = text.find("{\"ph\": ]").unwrap();
    let mut merged_with_error = 0;
    for c in 1..broken {
        let (r, merged) = merged_through_sections(bytes, c);
        let e = r.err().map(|e| e.to_string());
        assert_eq!(e.as_deref(), Some(one.as_str()), "cut {c}");
        merged_with_error += usize::from(merged);
    }
    assert!(merged_with_error > 0, "no cut reached the merge");
}

/// A corrupt `.json.gz` whose inflated garbage breaks the JSON before the checksum fails: the
/// threaded loader (the CLI's) reports the error the one-thread loader (the page's) stops at.
#[test]
fn a_corrupt_gzip_gives_the_one_thread_loaders_error() {
    let Some(mut gz) = tracelight_testkit::bytes("real/hta/nccl_data_a100_rank0of2.json.gz") else {
        return;
    };
    gz[5000..9000].fill(0xff);
    let run = |threaded: bool| {
        let mut l = Loader::new("corrupt.json.gz");
        if threaded {
            l = l.threaded();
        }
        let pushed = gz.chunks(1 << 16).try_for_each(|c| l.push(c));
        match pushed {
            Err(e) => e.in_file("corrupt.json.gz").to_string(),
            Ok(()) => match l.finish() {
                Err(e) => e.to_string(),
                Ok(_) => "no error".to_owned(),
            },
        }
    };
    let one = run(false);
    assert!(one.contains("malformed input"), "{one}");
    assert_eq!(run(true), one);
}

/// Every corpus trace cut where the page's workers cut it (`find_cut_forward` from each of
/// three evenly spaced offsets) merges through its wire sections into the one-thread model; such a
/// cut in a header (a `distributedInfo` list) is not an event boundary and is read again, but
/// nearly all are merged. A blind cut gives the same model too (read again).
#[test]
fn corpus_traces_cut_as_the_workers_cut_merge_through_sections() {
    use tracelight_core::ingest::kineto::cut::find_cut_forward;
    if tracelight_testkit::path("real").is_none() {
        return;
    }
    let mut rng = Lcg(5);
    let (mut checked, mut merged) = (0, 0);
    for (rel, bytes) in corpus() {
        let one = one_thread(&bytes);
        let Ok(one) = one else { panic!("{rel}") };
        for k in 1..4 {
            let from = bytes.len() * k / 4;
            let Some(c) = find_cut_forward(&bytes[from..], 0).map(|c| from + c) else {
                continue;
            };
            let (r, was_merged) = merged_through_sections(&bytes, c);
            assert_same_model(&r.unwrap(), &one, &format!("{rel} cut {c}"));
            checked += 1;
            merged += usize::from(was_merged);
        }
        let blind = 1 + rng.below(bytes.len() - 1);
        let (r, _) = merged_through_sections(&bytes, blind);
        assert_same_model(&r.unwrap(), &one, &format!("{rel} blind cut {blind}"));
    }
    assert!(checked > 30, "{checked} worker cuts checked");
    assert!(
        merged * 10 >= checked * 9,
        "{merged} of {checked} worker cuts merged"
    );
    println!("{merged} of {checked} worker cuts merged");
}

/// A shard's sections as a worker would post them, with bytes flipped, cut or dropped: the merge
/// and the finish give a model or an error, never a panic (the merging instance would trap).
#[test]
fn damaged_shard_sections_are_errors_not_panics() {
    use tracelight_core::ingest::kineto::{first_byte, KinetoReader};
    use tracelight_core::model::wire::Wire;
    let bytes = TRICKY.as_bytes();
    let bare = first_byte(bytes) == Some(b'[');
    let cuts: Vec<usize> = (1..bytes.len())
        .filter(|&c| {
            let mut acc = KinetoReader::new();
            acc.push(&bytes[..c]).is_ok() && merged_through_sections(bytes, c).1
        })
        .collect();
    assert!(cuts.len() > 5, "{} boundary cuts", cuts.len());
    let mut rng = Lcg(99);
    let mut errors = 0;
    for round in 0..3000 {
        let cut = cuts[rng.below(cuts.len())];
        let mut shard = KinetoReader::shard(cut as u64, bare);
        shard.push(&bytes[cut..]).unwrap();
        let mut status = Vec::new();
        None::<tracelight_core::Error>.put(&mut status);
        let mut all = vec![status];
        all.extend(shard.to_sections().unwrap());
        let k = rng.below(all.len());
        match round % 3 {
            0 => {
                let s = &mut all[k];
                for _ in 0..1 + rng.below(4) {
                    if !s.is_empty() {
                        let i = rng.below(s.len());
                        s[i] ^= 1 << rng.below(8);
                    }
                }
            }
            1 => {
                let n = all[k].len();
                all[k].truncate(rng.below(n));
            }
            _ => {
                all.remove(k);
            }
        }
        let refs: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
        let mut acc = KinetoReader::new();
        acc.push(&bytes[..cut]).unwrap();
        match acc.merge_sections(cut as u64, bare, &refs) {
            Ok(_) => errors += usize::from(acc.finish().is_err()),
            Err(_) => errors += 1,
        }
    }
    assert!(errors > 1000, "{errors} of 3000 damaged shards refused");
}

/// The page's merging worker for a big file reads nothing itself: the first shard reaches it as
/// sections too (`IncomingShard::first`), its staged columns made one block each of `reserve`
/// slices (the slices of every shard, as the workers count them), then the next shard merges as
/// in [`merged_through_sections`].
fn merged_by_a_merger(bytes: &[u8], cut: usize, reserve: usize) -> (Result<Trace>, bool) {
    use tracelight_core::ingest::kineto::{IncomingShard, KinetoReader};
    let head = shard_sections(&mut KinetoReader::new(), &bytes[..cut]);
    let first = IncomingShard::first(head.len(), reserve).and_then(|mut inc| {
        head.iter().try_for_each(|s| inc.push(s))?;
        inc.into_reader()
    });
    match first {
        Ok(acc) => merge_rest(acc, bytes, cut),
        Err(e) => (Err(e), false),
    }
}

/// A trace of `n` CPU ops on two threads, each launching a kernel on one of two streams (its
/// correlation, and an `ac2g` flow for every tenth), with a `B`/`E` pair per 1000 ops; one event a line, as
/// Kineto writes them.
fn many_slices(n: usize) -> String {
    let mut s = String::from("{\"schemaVersion\": 1,\n  \"traceEvents\": [\n");
    for i in 0..n {
        let (tid, ts) = (1 + i % 2, 10 * i as u64);
        s += &format!(
            "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op{}\", \"pid\": 1, \"tid\": {tid}, \"ts\": {ts}.000, \"dur\": 8.500, \"args\": {{\"External id\": {i}, \"Input Dims\": [[{}]]}}}},\n",
            i % 7,
            i % 5
        );
        s += &format!(
            "  {{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": {tid}, \"ts\": {}.000, \"dur\": 1.000, \"args\": {{\"correlation\": {i}}}}},\n",
            ts + 2
        );
        s += &format!(
            "  {{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k{}\", \"pid\": 0, \"tid\": {}, \"ts\": {}.000, \"dur\": 3.000, \"args\": {{\"device\": 0, \"stream\": {}, \"correlation\": {i}, \"grid\": [1, 2, 3]}}}},\n",
            i % 3,
            7 + i % 2,
            ts + 5,
            7 + i % 2
        );
        if i % 10 == 0 {
            s += &format!(
            "  {{\"ph\": \"s\", \"id\": {i}, \"pid\": 1, \"tid\": {tid}, \"ts\": {}.000, \"cat\": \"ac2g\", \"name\": \"ac2g\"}},\n  {{\"ph\": \"f\", \"id\": {i}, \"pid\": 0, \"tid\": {}, \"ts\": {}.000, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}},\n",
            ts + 2,
            7 + i % 2,
            ts + 5
        );
        }
        if i % 1000 == 0 {
            s += &format!("  {{\"ph\": \"B\", \"name\": \"span\", \"pid\": 1, \"tid\": 3, \"ts\": {ts}.000}},\n");
        }
        if i % 1000 == 999 {
            s += &format!("  {{\"ph\": \"E\", \"pid\": 1, \"tid\": 3, \"ts\": {ts}.000}},\n");
        }
    }
    s += "  {\"ph\": \"i\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"s\": \"t\"}\n]}\n";
    s
}

/// The merging worker that read nothing builds the one-thread model: on the hand-built traces at
/// every cut, and on a trace of 75,000 slices (each staged column then one block) cut where the
/// workers cut it, in a `B`/`E` pair, and blind, with the block short, exact and long (and
/// chunks, for a reservation under a chunk).
#[test]
fn a_merger_that_read_nothing_builds_the_one_thread_model() {
    use tracelight_core::ingest::kineto::cut::find_cut_forward;
    for text in [TRICKY, WARNING_ORDER_2, BARE, RAW_NEWLINE] {
        let bytes = text.as_bytes();
        let one = one_thread(bytes);
        for c in 1..bytes.len() {
            let (r, _) = merged_by_a_merger(bytes, c, 0);
            match (&one, &r) {
                (Ok(a), Ok(b)) => assert_same_model(b, a, &format!("cut {c}")),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "cut {c}"),
                _ => panic!("cut {c}: one thread and the merger disagree"),
            }
        }
    }
    let text = many_slices(25_000);
    let bytes = text.as_bytes();
    let one = one_thread(bytes).unwrap();
    let n = one.slices.len();
    assert!(n > 75_000, "{n} slices");
    let worker = |at: usize| at + find_cut_forward(&bytes[at..], 0).unwrap();
    let in_span = worker(text.find("\"ts\": 125000.000").unwrap());
    for (cut, what) in [
        (worker(bytes.len() / 2), "the workers' cut"),
        (in_span, "inside a B/E span"),
        (bytes.len() / 2 + 17, "blind"),
    ] {
        for reserve in [0, n / 2, n - 10, n, n * 2] {
            let (r, merged) = merged_by_a_merger(bytes, cut, reserve);
            assert_same_model(
                &r.unwrap(),
                &one,
                &format!("{what} {cut}, reserve {reserve}"),
            );
            assert_eq!(merged, what != "blind", "{what}");
        }
    }
}
