//! Which frame of an allocation's stack to show and to blame: memory_viz's frame filter, the
//! short `file:line:name` text, and the ranking that attributes an allocation to the frame a user
//! would act on (user Python, else torch's Python, else native code outside torch's machinery).
//! Kept apart from [`super::snapshot`]'s figures and replay, which use it for the peak's blocks and
//! the allocations by stack.

use crate::ingest::snapshot::{Snapshot, StackId};
use crate::model::StrId;
use rustc_hash::FxHashMap;

/// Frames shown per stack.
pub const TOP_FRAMES: usize = 5;

/// memory_viz's `frameFilter`: drops unwinder, interpreter and dispatcher frames.
pub fn frame_shown(filename: &str, name: &str) -> bool {
    const OMIT_NAMES: [&str; 8] = [
        "unwind::unwind",
        "CapturedTraceback::gather",
        "gather_with_cpp",
        "_start",
        "__libc_start_main",
        "PyEval_",
        "PyObject_",
        "PyFunction_",
    ];
    const OMIT_FILES: [&str; 10] = [
        "core/boxing",
        "/Register",
        "/Redispatch",
        "pythonrun.c",
        "Modules/main.c",
        "Objects/call.c",
        "Objects/methodobject.c",
        "pycore_ceval.h",
        "ceval.c",
        "cpython/abstract.h",
    ];
    !OMIT_NAMES.iter().any(|o| name.contains(o)) && !OMIT_FILES.iter().any(|o| filename.contains(o))
}

/// [`frame_shown`] of every frame of `s`, by frame id: the filter once per distinct (file,
/// function) pair rather than once per frame of every stack (on a 1 GB snapshot a million calls of
/// 18 substring searches: 0.45 s of the Memory tab's first render, for the peak's flame graph
/// alone), nor once per frame (a 100k-entry snapshot has ~100k frames, differing by line, but a
/// few hundred pairs: in wasm, where a substring search sets up a two-way searcher each call,
/// that was ~70 ms of the snapshot worker's ~100 ms of views on 50 MB).
pub fn shown_frames(s: &Snapshot) -> Vec<bool> {
    let mut seen: FxHashMap<(StrId, StrId), bool> = FxHashMap::default();
    (0..s.frames.filename.len())
        .map(|f| {
            let (file, name) = (s.frames.filename[f], s.frames.name[f]);
            *seen
                .entry((file, name))
                .or_insert_with(|| frame_shown(s.str(file), s.str(name)))
        })
        .collect()
}

/// `file:line:name`, as memory_viz writes a frame; but a native frame (line 0) shows its symbol
/// without parameters or template arguments, and without the file when it has none (`??`):
/// `torch::autograd::generated::BmmBackward0::apply` rather than a 120- to 400-character signature
/// of which a table cell showed only the tail.
pub(crate) fn frame_text(s: &Snapshot, f: u32) -> String {
    let f = f as usize;
    let (file, line, name) = (
        s.str(s.frames.filename[f]),
        s.frames.line[f],
        s.str(s.frames.name[f]),
    );
    match (line, file) {
        (0, "" | "??") => short_symbol(name),
        (0, _) => format!("{file}:0:{}", short_symbol(name)),
        _ => format!("{file}:{line}:{name}"),
    }
}

/// A C++ symbol up to its parameter list (the first `(` outside template arguments that does not
/// open `(anonymous namespace)`), with each template argument list shown as `<…>`.
pub(crate) fn short_symbol(name: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for (i, c) in name.char_indices() {
        match c {
            '<' => {
                if depth == 0 {
                    out.push_str("<…>");
                }
                depth += 1;
            }
            '>' => depth = depth.saturating_sub(1),
            '(' if i > 0 && depth == 0 && !name[i..].starts_with("(anonymous namespace)") => break,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// The first [`TOP_FRAMES`] frames of a stack that memory_viz would show.
pub fn top_frames(s: &Snapshot, stack: StackId) -> Vec<String> {
    s.stacks
        .get(stack)
        .iter()
        .filter(|&&f| {
            let f = f as usize;
            frame_shown(s.str(s.frames.filename[f]), s.str(s.frames.name[f]))
        })
        .take(TOP_FRAMES)
        .map(|&f| frame_text(s, f))
        .collect()
}

/// How a frame ranks as the place to attribute an allocation to (see [`attribution_frame`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FrameRank {
    /// Hidden by memory_viz's frame filter ([`frame_shown`]).
    Hidden,
    /// C++ inside the allocator, ATen, c10 or torch's own bindings, or thread start-up.
    Internal,
    /// Any other shown C++ (or non-Python) frame.
    Native,
    /// Python inside torch itself (`/torch/` in the path).
    TorchPython,
    /// Python outside torch: the user's code.
    User,
}

/// Path fragments of C++ frames that are torch's machinery rather than the caller: the caching
/// allocator, ATen kernels and dispatch, the Python bindings (`torch/csrc/`). Real dumps often carry
/// bare file names (`CUDACachingAllocator.cpp`, `RegisterCUDA.cpp`) or none, so names count too.
const INTERNAL_FILES: [&str; 5] = [
    "c10/",
    "aten/src/",
    "torch/csrc/",
    "/ATen/",
    "torch/include/",
];
/// Name prefixes of the same machinery, and of thread start-up (`clone`, `pthread_…`).
const INTERNAL_NAMES: [&str; 9] = [
    "c10::",
    "at::",
    "torch::",
    "std::",
    "void c10::",
    "void at::",
    "pthread_",
    "clone",
    "execute_native_thread_routine",
];

/// Ranks one frame (memory_viz's `_frame_filter` first, then the internals above). A C++-only
/// stack from the autograd engine's thread names its backward node
/// (`torch::autograd::generated::BmmBackward0::apply`): that says which op's backward allocated.
pub fn frame_rank(filename: &str, name: &str) -> FrameRank {
    if !frame_shown(filename, name) {
        return FrameRank::Hidden;
    }
    let file = filename.replace('\\', "/");
    if file.ends_with(".py") {
        return if file.contains("/torch/") {
            FrameRank::TorchPython
        } else {
            FrameRank::User
        };
    }
    if name.contains("autograd::generated::") {
        return FrameRank::Native;
    }
    let internal = file.ends_with(".o")
        || INTERNAL_FILES.iter().any(|f| file.contains(f))
        || INTERNAL_NAMES.iter().any(|n| name.starts_with(n));
    if internal {
        FrameRank::Internal
    } else {
        FrameRank::Native
    }
}

/// [`frame_rank`] by frame id, computed on first use and once per distinct (file, function) pair:
/// a stack is only read up to its first user frame, and the string tests (18 substring searches)
/// must not run per frame — a 100k-entry snapshot has ~100k distinct frames but a few hundred pairs.
#[derive(Debug, Default)]
pub struct FrameRanker {
    by_frame: Vec<Option<FrameRank>>,
    by_pair: FxHashMap<(StrId, StrId), FrameRank>,
}

impl FrameRanker {
    pub fn rank(&mut self, s: &Snapshot, f: u32) -> FrameRank {
        let i = f as usize;
        if let Some(Some(r)) = self.by_frame.get(i) {
            return *r;
        }
        let (Some(&file), Some(&name)) = (s.frames.filename.get(i), s.frames.name.get(i)) else {
            return FrameRank::Hidden;
        };
        let r = *self
            .by_pair
            .entry((file, name))
            .or_insert_with(|| frame_rank(s.str(file), s.str(name)));
        if self.by_frame.len() <= i {
            self.by_frame
                .resize(s.frames.filename.len().max(i + 1), None);
        }
        self.by_frame[i] = Some(r);
        r
    }
}

/// The frame an allocation is attributed to: the innermost frame of the best [`FrameRank`] in its
/// stack — user Python, else torch's Python, else native code outside torch's machinery, else the
/// machinery itself (so a C++-only stack still names something); `None` for no shown frame.
/// memory_viz lists every shown frame; this picks the one a user would act on, never the caching
/// allocator's `malloc` while a better frame exists.
pub fn attribution_frame(s: &Snapshot, ranks: &mut FrameRanker, stack: StackId) -> Option<u32> {
    let mut best: Option<(FrameRank, u32)> = None;
    for &f in s.stacks.get(stack) {
        let r = ranks.rank(s, f);
        if r == FrameRank::Hidden || best.is_some_and(|(b, _)| b >= r) {
            continue;
        }
        best = Some((r, f));
        if r == FrameRank::User {
            break;
        }
    }
    best.map(|(_, f)| f)
}

/// [`attribution_frame`] as `file:line:name`, or `<no stack>`.
pub fn top_user_frame(s: &Snapshot, stack: StackId) -> String {
    attribution_frame(s, &mut FrameRanker::default(), stack)
        .map_or_else(|| "<no stack>".into(), |f| frame_text(s, f))
}
