//! Attribution of a hand-built snapshot whose answer is known by construction (issue 18).
//!
//! One segment of 64 MiB on device 0 holds, at the dump, `b1` (8 MiB, allocated before the trace
//! began, so no trace entry: only `segments[].blocks[].frames` says `model.py:10:make_weights`) and
//! `b2` (16 MiB, allocated in the trace at `model.py:20:forward`). The trace also allocates and
//! frees `y` (2 MiB, `model.py:30:tmp`) and frees `x` (4 MiB), allocated before the trace at
//! `model.py:5:load`. Replay: 12 MiB before the trace (x + b1), +16, +2 → the peak, 30 MiB, with
//! all four live. Two recordings of the same run:
//! - `context="alloc"`: torch records each free with the block's allocation context (no free-time
//!   context: `context ? context : block->context_when_allocated`), so `x`'s free names
//!   `model.py:5:load`, its allocation site;
//! - `context="all"`: frees carry the freeing stack (`THPVariable_clear`, `model.py:40:cleanup`),
//!   so `x` is "allocated before the trace" and its free frame is kept apart, never the top frame.

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::snapshot::summarize;
use tracelight_core::ingest::{load_bytes, Loaded};

/// The subset of Python values a snapshot needs, written as a protocol-2 pickle.
enum Py {
    Int(i64),
    Str(&'static str),
    List(Vec<Py>),
    Dict(Vec<(&'static str, Py)>),
}

fn write(v: &Py, out: &mut Vec<u8>) {
    match v {
        Py::Int(i) => {
            // LONG1 with 8 little-endian bytes: any i64.
            out.push(0x8a);
            out.push(8);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Py::Str(s) => {
            out.push(b'X');
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Py::List(items) => {
            out.push(b']');
            if !items.is_empty() {
                out.push(b'(');
                for i in items {
                    write(i, out);
                }
                out.push(b'e');
            }
        }
        Py::Dict(items) => {
            out.push(b'}');
            if !items.is_empty() {
                out.push(b'(');
                for (k, v) in items {
                    write(&Py::Str(k), out);
                    write(v, out);
                }
                out.push(b'u');
            }
        }
    }
}

fn pickle(v: &Py) -> Vec<u8> {
    let mut out = vec![0x80, 2];
    write(v, &mut out);
    out.push(b'.');
    out
}

const MIB: i64 = 1 << 20;
const SEG: i64 = 0x7f00_0000_0000;

fn frames(fs: &[(&'static str, i64, &'static str)]) -> Py {
    Py::List(
        fs.iter()
            .map(|&(f, l, n)| {
                Py::Dict(vec![
                    ("filename", Py::Str(f)),
                    ("line", Py::Int(l)),
                    ("name", Py::Str(n)),
                ])
            })
            .collect(),
    )
}

const MALLOC: (&str, i64, &str) = (
    "CUDACachingAllocator.cpp",
    0,
    "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc",
);
const FREE: (&str, i64, &str) = (
    "CUDACachingAllocator.cpp",
    0,
    "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::free",
);

fn entry(action: &'static str, addr: i64, size: i64, f: Py) -> Py {
    Py::Dict(vec![
        ("action", Py::Str(action)),
        ("addr", Py::Int(addr)),
        ("size", Py::Int(size)),
        ("stream", Py::Int(0)),
        ("frames", f),
    ])
}

fn block(addr: i64, size: i64, state: &'static str, f: Py) -> Py {
    Py::Dict(vec![
        ("address", Py::Int(addr)),
        ("size", Py::Int(size)),
        ("requested_size", Py::Int(size)),
        ("state", Py::Str(state)),
        ("frames", f),
    ])
}

/// The run above; `alloc_context`: frees carry allocation stacks (`context="alloc"`).
fn snapshot(alloc_context: bool) -> Vec<u8> {
    let (b1, b2, y, x) = (SEG, SEG + 8 * MIB, SEG + 24 * MIB, SEG + 28 * MIB);
    let load: fn() -> Py = || frames(&[MALLOC, ("model.py", 5, "load")]);
    let tmp: fn() -> Py = || frames(&[MALLOC, ("model.py", 30, "tmp")]);
    let (free_y, free_x) = if alloc_context {
        (tmp, load)
    } else {
        (
            (|| frames(&[FREE, ("model.py", 31, "tmp")])) as fn() -> Py,
            (|| {
                frames(&[
                    FREE,
                    ("python_variable.cpp", 0, "THPVariable_clear"),
                    ("model.py", 40, "cleanup"),
                ])
            }) as fn() -> Py,
        )
    };
    let fwd = || frames(&[MALLOC, ("model.py", 20, "forward")]);
    let trace = Py::List(vec![
        entry("alloc", b2, 16 * MIB, fwd()),
        entry("alloc", y, 2 * MIB, tmp()),
        entry("free_requested", y, 2 * MIB, free_y()),
        entry("free_completed", y, 2 * MIB, free_y()),
        entry("free_requested", x, 4 * MIB, free_x()),
        entry("free_completed", x, 4 * MIB, free_x()),
    ]);
    let seg = Py::Dict(vec![
        ("device", Py::Int(0)),
        ("address", Py::Int(SEG)),
        ("total_size", Py::Int(64 * MIB)),
        ("allocated_size", Py::Int(24 * MIB)),
        ("active_size", Py::Int(24 * MIB)),
        ("requested_size", Py::Int(24 * MIB)),
        ("stream", Py::Int(0)),
        ("segment_type", Py::Str("large")),
        (
            "blocks",
            Py::List(vec![
                block(
                    b1,
                    8 * MIB,
                    "active_allocated",
                    frames(&[MALLOC, ("model.py", 10, "make_weights")]),
                ),
                block(b2, 16 * MIB, "active_allocated", fwd()),
                block(y, 40 * MIB, "inactive", Py::List(vec![])),
            ]),
        ),
    ]);
    pickle(&Py::Dict(vec![
        ("segments", Py::List(vec![seg])),
        ("device_traces", Py::List(vec![trace])),
    ]))
}

/// (peak, live-at-peak bytes per group frame, peak blocks as (size, frame, freed at)).
type Attribution = (u64, Vec<(String, u64)>, Vec<(u64, String, Option<String>)>);

fn live_by_frame(alloc_context: bool) -> Attribution {
    let bytes = snapshot(alloc_context);
    let Ok(Loaded::Snapshot(s)) = load_bytes("handbuilt.pickle", &bytes) else {
        panic!("the hand-built pickle must load as a snapshot")
    };
    let d = summarize(&s)
        .devices
        .into_iter()
        .find(|d| d.device == 0)
        .unwrap();
    let mut groups: Vec<(String, u64)> = d
        .by_stack
        .iter()
        .filter(|g| g.live_at_peak_bytes > 0)
        .map(|g| (g.frame.clone(), g.live_at_peak_bytes))
        .collect();
    groups.sort();
    let blocks = d
        .peak_blocks
        .iter()
        .map(|b| (b.size, b.frame.clone(), b.freed_at.clone()))
        .collect();
    (d.peak_active_bytes, groups, blocks)
}

const M: u64 = 1 << 20;

#[test]
fn frees_recorded_with_allocation_context_name_the_allocation_site_of_pre_trace_blocks() {
    let (peak, groups, blocks) = live_by_frame(true);
    assert_eq!(peak, 30 * M);
    assert_eq!(
        groups,
        vec![
            ("model.py:10:make_weights".to_owned(), 8 * M),
            ("model.py:20:forward".to_owned(), 16 * M),
            ("model.py:30:tmp".to_owned(), 2 * M),
            ("model.py:5:load".to_owned(), 4 * M),
        ]
    );
    assert!(blocks.contains(&(4 * M, "model.py:5:load".to_owned(), None)));
}

#[test]
fn frees_recorded_with_their_own_stack_leave_pre_trace_blocks_unattributed_never_to_the_free() {
    let (peak, groups, blocks) = live_by_frame(false);
    assert_eq!(peak, 30 * M);
    assert_eq!(
        groups,
        vec![
            ("<allocated before the trace>".to_owned(), 4 * M),
            ("model.py:10:make_weights".to_owned(), 8 * M),
            ("model.py:20:forward".to_owned(), 16 * M),
            ("model.py:30:tmp".to_owned(), 2 * M),
        ]
    );
    // Largest at peak: the pre-trace block live at the dump has its allocation frame from
    // `segments[].blocks[].frames`; the one seen only at its free never shows the free frame.
    assert!(blocks.contains(&(8 * M, "model.py:10:make_weights".to_owned(), None)));
    assert!(blocks.contains(&(
        4 * M,
        "<allocated before the trace>".to_owned(),
        Some("model.py:40:cleanup".to_owned())
    )));
}

fn load(alloc_context: bool) -> Box<tracelight_core::ingest::snapshot::Snapshot> {
    let bytes = snapshot(alloc_context);
    let Ok(Loaded::Snapshot(s)) = load_bytes("handbuilt.pickle", &bytes) else {
        panic!("the hand-built pickle must load as a snapshot")
    };
    s
}

/// The flame graph at the peak: four outermost frames, widths the live bytes, largest first,
/// offsets adding up left to right; the allocator's `malloc` frame one level below each.
#[test]
fn peak_flame_widths_are_the_live_bytes_of_each_stack() {
    use tracelight_core::analysis::snapshot_flame::peak_flame;
    let s = load(false);
    let f = peak_flame(&s, 0);
    assert_eq!(f.total_bytes, 30 * M);
    assert_eq!(f.depth, 2);
    let top: Vec<(&str, u64, u64)> = f
        .nodes
        .iter()
        .filter(|n| n.depth == 0)
        .map(|n| (n.label.as_str(), n.offset, n.bytes))
        .collect();
    assert_eq!(
        top,
        vec![
            ("model.py:20:forward", 0, 16 * M),
            ("model.py:10:make_weights", 16 * M, 8 * M),
            ("<allocated before the trace>", 24 * M, 4 * M),
            ("model.py:30:tmp", 28 * M, 2 * M),
        ]
    );
    let fwd = f
        .nodes
        .iter()
        .position(|n| n.label == "model.py:20:forward")
        .unwrap() as u32;
    let (b2, x) = (SEG as u64 + 8 * M, SEG as u64 + 28 * M);
    assert_eq!(f.blocks_under(fwd), vec![(b2, 16 * M)]);
    let child = &f.nodes[fwd as usize + 1];
    assert_eq!((child.depth, child.parent, child.bytes), (1, fwd, 16 * M));
    assert!(child.label.ends_with("DeviceCachingAllocator::malloc"));
    let before = f.hit(0, 25 * M).unwrap();
    assert_eq!(f.blocks_under(before), vec![(x, 4 * M)]);
}

/// The allocator state after entry 1 (y allocated, x not yet freed): b1, b2, y and x in the one
/// segment at their offsets; at the dump only b1 and b2.
#[test]
fn allocator_state_at_a_point_of_the_trace_and_at_the_dump() {
    use tracelight_core::analysis::snapshot_state::{
        state_after, state_at_dump, RangeState::Allocated,
    };
    let s = load(false);
    let st = state_after(&s, 0, 1);
    assert_eq!(
        (st.reserved_bytes, st.allocated_bytes, st.unplaced_bytes),
        (64 * M, 30 * M, 0)
    );
    assert_eq!(
        st.segments[0].ranges,
        vec![
            (0, 8 * M, Allocated),
            (8 * M, 16 * M, Allocated),
            (24 * M, 2 * M, Allocated),
            (28 * M, 4 * M, Allocated)
        ]
    );
    let end = state_after(&s, 0, 5);
    assert_eq!(end.allocated_bytes, 24 * M);
    let dump = state_at_dump(&s, 0);
    assert_eq!(
        (dump.reserved_bytes, dump.allocated_bytes),
        (64 * M, 24 * M)
    );
    assert_eq!(dump.segments[0].ranges, end.segments[0].ranges);
    // The scrubber's path: one pair of replays serves every position, with the same states.
    let r = tracelight_core::analysis::snapshot_state::Replays::of(&s, 0);
    for at in 0..6 {
        let one = tracelight_core::analysis::snapshot_state::state_after_in(&s, 0, at, &r);
        assert_eq!(
            format!("{one:?}"),
            format!("{:?}", state_after(&s, 0, at)),
            "after {at}"
        );
    }
}
