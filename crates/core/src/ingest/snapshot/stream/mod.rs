//! A snapshot read as its bytes arrive, in bounded memory: the pickle's opcodes run on a small
//! machine whose values are already the model's — strings interned on arrival, a frame dict
//! turned into a frame id and a frames list into a stack id as soon as it is put in its list or
//! dict, a trace entry appended straight to its device's columns and a segment (with its blocks)
//! to the segment columns as soon as it is put in its list. What stays is what the model keeps
//! plus the containers still open and one `u32` per memo slot (what each memoized object became),
//! so a 1 GB snapshot never holds the file, an arena of its values, or both at once; the whole-file
//! decoder ([`crate::ingest::pickle`] + [`super::from_pickle`]) held the file and an arena of
//! 16 bytes per value and ~2.5 bytes of item slots per input byte.
//!
//! Same opcodes, refusals and limits as [`crate::ingest::pickle`] (its module doc says why); the
//! model equals [`super::parse`]'s in every column, by value (`tests/snapshot_stream.rs` compares
//! them on every corpus snapshot). Ids (strings, frames, stacks) are numbered in the order met,
//! which may differ from the whole-file reader's.

mod build;
mod fast;
mod finish;
mod ops;

use super::*;
use build::Build;

/// A value on the machine's stack or in a container.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum V {
    None,
    Bool(bool),
    Int(i64),
    /// An int of 65–128 bits: an index into [`SnapshotStream::big`].
    Big(u32),
    /// An int wider than 128 bits (only ever shown, as JSON text).
    Huge,
    Float(f64),
    Str(StrId),
    /// Bytes: an index into [`SnapshotStream::bytes`].
    Bytes(u32),
    /// A container still open (or kept whole: settings, blocks): an index into `conts`.
    Cont(u32),
    Frame(u32),
    Stack(StackId),
    /// A trace entry or segment already moved into the model.
    Gone,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Dict,
    List,
    Tuple,
    Set,
}

/// A container while it is open. Slots are reused (with their item buffers) once a container
/// became a model value, so steady-state reading allocates nothing per value.
#[derive(Debug)]
pub(super) struct Cont {
    pub(super) kind: Kind,
    /// A dict's keys and values interleaved.
    pub(super) items: Vec<V>,
    /// The memo slot that refers to it ([`NO_MEMO`]: none).
    memo: u32,
    /// Reached twice (a memo fetch or `DUP` while open): never reused; `done` keeps what it became.
    shared: bool,
    done: Option<V>,
    /// Trace entries appended to this list: `Build::traces[k]`.
    pub(super) trace: Option<u32>,
}

const NO_MEMO: u32 = u32::MAX;

/// Memo slots, one `u32` each: a tag in the top 3 bits and a payload.
const TAG_SHIFT: u32 = 29;
const PAYLOAD: u32 = (1 << TAG_SHIFT) - 1;
const M_STR: u32 = 0;
const M_FRAME: u32 = 1;
const M_STACK: u32 = 2;
const M_CONT: u32 = 3;
const M_GONE: u32 = 4;
const M_BYTES: u32 = 5;
/// A memoized value without a compact form (an int, a float: Python never memoizes them, a
/// hostile file may): kept in `odd_memo`.
const M_ODD: u32 = 6;
const M_UNSET: u32 = u32::MAX;

/// At most this many containers open at once (and kept whole). Real snapshots hold a few
/// thousand (the segments' blocks); anything near this is hostile.
pub const MAX_OPEN: usize = 1 << 22;

/// At most this many values on the machine's stack (16 bytes each). Python's pickler puts at most
/// a batch of 1000 items per open container there; a file past this is hostile, and is refused
/// before it exhausts a tab's memory.
pub const MAX_STACK: usize = 1 << 24;

/// A snapshot holds about one memo slot per this many bytes when its frames are fresh dicts (the
/// bench snapshot: 2.9 million in 50.5 MB, one per 17 bytes); fewer when they are memo fetches.
const MEMO_BYTES: u64 = 16;
/// The most memo slots reserved ahead (32 MB); a bigger memo doubles as before.
const MEMO_RESERVE_MAX: usize = 1 << 23;

/// A snapshot holds at most about one distinct stack per this many bytes: an entry's `frames`
/// list is a few hundred bytes (the bench snapshot: 100,000 entries, nearly all of them distinct
/// stacks, in 50.5 MB); a real one's entries mostly share theirs.
const STACK_BYTES: u64 = 512;
/// The most stacks the stack table is sized for ahead (128 K: ~1.3 MB of table); past it, it
/// grows. Not more: a table far bigger than its stacks misses the cache on every lookup (the
/// 1 GB real-shaped snapshot, 20,000 stacks in a table sized for 2 M: first chart 5.5 -> 7.4 s).
const STACK_RESERVE_MAX: usize = 1 << 17;

/// Bytes of a new slice run together with an opcode the last one cut: more than any opcode but
/// a long string or bytes.
const BRIDGE: usize = 64 << 10;

/// Reads a snapshot pickle pushed in slices of any size.
pub struct SnapshotStream {
    /// Bytes not yet run: an opcode cut by the end of a slice waits here for the next.
    pending: Vec<u8>,
    /// File offset of `pending[0]`.
    base: u64,
    stack: Vec<V>,
    marks: Vec<usize>,
    memo: Vec<u32>,
    odd_memo: FxHashMap<u32, V>,
    pub(super) conts: Vec<Cont>,
    free: Vec<u32>,
    big: Vec<i128>,
    bytes: Vec<Box<[u8]>>,
    /// Values pushed so far: bounds memo indices, as in the whole-file decoder.
    values: u64,
    /// The items of a container built from the stack (reused).
    scratch: Vec<V>,
    root: Option<V>,
    b: Build,
    /// Frame dicts read in one step ([`fast`]).
    frames_whole: u64,
    /// `frames` lists of memoized frames read in one step ([`fast`]).
    stacks_whole: u64,
}

type Step = std::result::Result<(), Stop>;

/// Why the opcode loop stopped before the end of its bytes.
enum Stop {
    /// The opcode at this offset (of the slice run) needs bytes not yet pushed.
    More(usize),
    Fail(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Fail(e)
    }
}

impl Default for SnapshotStream {
    fn default() -> Self {
        SnapshotStream::new()
    }
}

impl SnapshotStream {
    pub fn new() -> Self {
        SnapshotStream {
            pending: Vec::new(),
            base: 0,
            stack: Vec::new(),
            marks: Vec::new(),
            memo: Vec::new(),
            odd_memo: FxHashMap::default(),
            conts: Vec::new(),
            free: Vec::new(),
            big: Vec::new(),
            bytes: Vec::new(),
            values: 0,
            scratch: Vec::new(),
            root: None,
            b: Build::new(),
            frames_whole: 0,
            stacks_whole: 0,
        }
    }

    /// Runs the next bytes of the file.
    pub fn push(&mut self, data: &[u8]) -> Result<()> {
        if self.root.is_some() {
            // Past STOP: like `pickle.load`, the rest of the file is not read.
            return Ok(());
        }
        let mut pending = std::mem::take(&mut self.pending);
        let mut data = data;
        if !pending.is_empty() {
            // The opcode cut by the last slice's end, completed from the head of this one: run
            // on those bytes alone, then on the rest of the slice where it is, rather than copying
            // the whole slice behind them (a 4 MiB copy per piece of a worker's read). An opcode
            // longer than the head (a long string) takes the whole slice, as before.
            let old = pending.len();
            let head = data.len().min(BRIDGE);
            pending.extend_from_slice(&data[..head]);
            let n = self.run(&pending)?;
            if n >= old {
                data = &data[n - old..];
                pending.clear();
                self.base += n as u64;
            } else {
                pending.drain(..n);
                self.base += n as u64;
                pending.extend_from_slice(&data[head..]);
                let m = self.run(&pending)?;
                pending.drain(..m);
                self.base += m as u64;
                self.pending = pending;
                return Ok(());
            }
        }
        if self.root.is_some() {
            self.pending = pending;
            return Ok(());
        }
        let n = self.run(data)?;
        pending.extend_from_slice(&data[n..]);
        self.base += n as u64;
        self.pending = pending;
        Ok(())
    }

    /// Ends the file and returns the model.
    pub fn finish(mut self) -> Result<Snapshot> {
        let Some(root) = self.root else {
            return Err(Error::new(
                ErrorKind::Truncated,
                self.base + self.pending.len() as u64,
            ));
        };
        finish::finish(&mut self, root)
    }

    /// Bytes of memory the reader holds besides the model (tests and benchmarks: the bound).
    pub fn working_bytes(&self) -> usize {
        self.pending.capacity()
            + self.memo.capacity() * 4
            + self.stack.capacity() * std::mem::size_of::<V>()
            + self
                .conts
                .iter()
                .map(|c| c.items.capacity() * std::mem::size_of::<V>())
                .sum::<usize>()
            + self.conts.capacity() * std::mem::size_of::<Cont>()
    }

    /// The file's size, when known: the memo is reserved for it at once rather than doubled as
    /// it fills. In wasm each doubling copies the memo into memory never touched before (slow the
    /// first time: page faults) and leaves the old copy behind; on the 50 MB bench snapshot (2.9
    /// million memo slots) a fresh instance grew by 55 MB instead of 70, and the page's worker
    /// stayed within the memory its spare worker had touched.
    pub fn expect_bytes(&mut self, bytes: u64) {
        let slots = (bytes / MEMO_BYTES).min(MEMO_RESERVE_MAX as u64) as usize;
        let _ = self.memo.try_reserve_exact(slots);
        self.b
            .reserve_stacks((bytes / STACK_BYTES).min(STACK_RESERVE_MAX as u64) as usize);
    }

    /// Frame dicts read in one step rather than opcode by opcode (tests and benchmarks: the
    /// fast path is taken).
    pub fn frames_read_whole(&self) -> u64 {
        self.frames_whole
    }

    /// `frames` lists of memoized frames read in one step (tests and benchmarks).
    pub fn stacks_read_whole(&self) -> u64 {
        self.stacks_whole
    }

    fn err(&self, kind: ErrorKind, at: usize) -> Error {
        Error::new(kind, self.base + at as u64)
    }

    fn syntax(&self, msg: &str, at: usize) -> Stop {
        Stop::Fail(self.err(ErrorKind::Syntax(msg.into()), at))
    }

    fn floor(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    fn push_v(&mut self, v: V) {
        self.values += 1;
        self.stack.push(v);
    }

    fn pop(&mut self, at: usize) -> std::result::Result<V, Stop> {
        if self.stack.len() <= self.floor() {
            return Err(self.syntax("pickle stack underflow", at));
        }
        self.stack
            .pop()
            .ok_or_else(|| self.syntax("pickle stack underflow", at))
    }

    fn pop_mark(&mut self, at: usize) -> std::result::Result<usize, Stop> {
        self.marks
            .pop()
            .ok_or_else(|| self.syntax("pickle MARK missing", at))
    }

    /// The value just below stack position `m` (a popped MARK's), if above the current floor.
    fn below(&self, m: usize, at: usize) -> std::result::Result<V, Stop> {
        match m.checked_sub(1).and_then(|k| self.stack.get(k)) {
            Some(&v) if m > self.floor() => Ok(v),
            _ => Err(self.syntax("pickle stack underflow", at)),
        }
    }

    /// A new empty container on the stack.
    fn open(&mut self, kind: Kind, at: usize) -> Step {
        let c = match self.free.pop() {
            Some(c) => {
                if let Some(x) = self.conts.get_mut(c as usize) {
                    x.kind = kind;
                    x.items.clear();
                    x.memo = NO_MEMO;
                    x.shared = false;
                    x.done = None;
                    x.trace = None;
                }
                c
            }
            None => {
                if self.conts.len() >= MAX_OPEN {
                    return Err(Stop::Fail(self.err(
                        ErrorKind::Limit(format!("more than {MAX_OPEN} pickle containers open")),
                        at,
                    )));
                }
                self.conts.push(Cont {
                    kind,
                    items: Vec::new(),
                    memo: NO_MEMO,
                    shared: false,
                    done: None,
                    trace: None,
                });
                (self.conts.len() - 1) as u32
            }
        };
        self.push_v(V::Cont(c));
        Ok(())
    }

    /// Gives a container's slot back once it became a model value. One reached twice (a memo
    /// fetch, `DUP`) keeps its slot: it remembers what it became, or, when it became nothing of
    /// the model's (`Gone`: part of an entry or segment already read), stays whole for the next
    /// reference.
    pub(super) fn release(&mut self, c: u32, became: V) {
        let Some(x) = self.conts.get_mut(c as usize) else {
            return;
        };
        if x.shared {
            if became != V::Gone {
                x.done = Some(became);
                let m = x.memo;
                if let (Some(slot), Some(v)) = (self.memo.get_mut(m as usize), compact(became)) {
                    *slot = v;
                }
            }
            return;
        }
        if x.memo != NO_MEMO {
            let m = x.memo;
            if let Some(slot) = self.memo.get_mut(m as usize) {
                *slot = compact(became).unwrap_or(M_GONE << TAG_SHIFT);
            }
        }
        x.items.clear();
        x.memo = NO_MEMO;
        self.free.push(c);
    }

    fn memo_put(&mut self, idx: usize, at: usize) -> Step {
        let v = match self.stack.last() {
            Some(&v) if self.stack.len() > self.floor() => v,
            _ => return Err(self.syntax("pickle stack underflow", at)),
        };
        if idx as u64 > self.values.saturating_add(1024) || idx >= M_UNSET as usize {
            return Err(Stop::Fail(self.err(
                ErrorKind::Limit(format!("memo index {idx} far beyond the values decoded")),
                at,
            )));
        }
        if self.memo.len() <= idx {
            self.memo.resize(idx + 1, M_UNSET);
        }
        let slot = match compact(v) {
            Some(s) => s,
            None => {
                self.odd_memo.insert(idx as u32, v);
                M_ODD << TAG_SHIFT
            }
        };
        self.memo[idx] = slot;
        if let V::Cont(c) = v {
            if let Some(x) = self.conts.get_mut(c as usize) {
                x.memo = idx as u32;
            }
        }
        Ok(())
    }

    fn memo_get(&mut self, idx: usize, at: usize) -> Step {
        let slot = self.memo.get(idx).copied().unwrap_or(M_UNSET);
        let payload = slot & PAYLOAD;
        let v = match slot >> TAG_SHIFT {
            _ if slot == M_UNSET => {
                return Err(self.syntax(&format!("memo index {idx} read before it was written"), at))
            }
            M_STR => V::Str(StrId(payload)),
            M_FRAME => V::Frame(payload),
            M_STACK => V::Stack(payload),
            M_BYTES => V::Bytes(payload),
            M_CONT => {
                let Some(x) = self.conts.get_mut(payload as usize) else {
                    return Err(self.syntax("memo index of a lost container", at));
                };
                if let Some(d) = x.done {
                    d
                } else {
                    x.shared = true;
                    V::Cont(payload)
                }
            }
            M_ODD => self.odd_memo.get(&(idx as u32)).copied().unwrap_or(V::None),
            _ => V::Gone,
        };
        self.push_v(v);
        Ok(())
    }

    fn dup(&mut self, at: usize) -> Step {
        let v = match self.stack.last() {
            Some(&v) if self.stack.len() > self.floor() => v,
            _ => return Err(self.syntax("pickle stack underflow", at)),
        };
        if let V::Cont(c) = v {
            if let Some(x) = self.conts.get_mut(c as usize) {
                x.shared = true;
            }
        }
        self.stack.push(v);
        Ok(())
    }

    /// `stack[from..]` (then popped) put into container `c`: each value made a model value where
    /// it is one ([`build::place`]).
    fn extend(&mut self, c: V, from: usize, at: usize, dict: bool) -> Step {
        let V::Cont(c) = c else {
            let what = if dict {
                "SETITEMS on a non-dict"
            } else {
                "APPENDS on a non-list"
            };
            return Err(self.syntax(what, at));
        };
        let kind = self.conts.get(c as usize).map(|x| x.kind);
        let ok = match kind {
            Some(Kind::Dict) => dict,
            Some(Kind::List) | Some(Kind::Set) => !dict,
            _ => false,
        };
        if !ok {
            let what = if dict {
                "SETITEMS on a non-dict"
            } else {
                "APPENDS on a non-list"
            };
            return Err(self.syntax(what, at));
        }
        let n = self.stack.len().saturating_sub(from);
        if dict && !n.is_multiple_of(2) {
            return Err(self.syntax("SETITEMS with an odd item count", at));
        }
        let mut vals = std::mem::take(&mut self.stack);
        let r = build::place(self, c, &vals[from..]);
        vals.truncate(from);
        self.stack = vals;
        r.map_err(Stop::Fail)
    }

    /// A new container of `kind` holding `stack[from..]` (popped).
    fn build(&mut self, kind: Kind, from: usize, at: usize) -> Step {
        let mut vals = std::mem::take(&mut self.scratch);
        vals.clear();
        vals.extend(self.stack.drain(from..));
        self.open(kind, at)?;
        let Some(V::Cont(c)) = self.stack.last().copied() else {
            return Err(self.syntax("pickle stack underflow", at));
        };
        // `open` counted the new container as a value; the items were counted when pushed.
        let r = build::place(self, c, &vals);
        self.scratch = vals;
        r.map_err(Stop::Fail)
    }

    fn str_value(&mut self, s: &[u8]) -> V {
        let id = match std::str::from_utf8(s) {
            Ok(t) => self.b.s.strings.intern(t),
            // Python writes surrogates with `surrogatepass`; keep the rest readable.
            Err(_) => self.b.s.strings.intern(&String::from_utf8_lossy(s)),
        };
        V::Str(id)
    }

    /// Runs the opcodes in `d`; returns how many bytes were consumed (an opcode cut by the end of
    /// `d` waits for more).
    fn run(&mut self, d: &[u8]) -> Result<usize> {
        let mut i = 0;
        loop {
            match self.op(d, &mut i) {
                Ok(true) => {}
                Ok(false) => return Ok(d.len()),
                Err(Stop::More(at)) => return Ok(at),
                Err(Stop::Fail(e)) => return Err(e),
            }
        }
    }
}

/// A value's memo slot, where it has a compact one.
fn compact(v: V) -> Option<u32> {
    let tagged = |tag: u32, p: u32| (p <= PAYLOAD).then_some((tag << TAG_SHIFT) | p);
    match v {
        V::Str(s) => tagged(M_STR, s.0),
        V::Frame(f) => tagged(M_FRAME, f),
        V::Stack(s) => tagged(M_STACK, s),
        V::Cont(c) => tagged(M_CONT, c),
        V::Bytes(b) => tagged(M_BYTES, b),
        V::Gone => Some(M_GONE << TAG_SHIFT),
        _ => None,
    }
}

/// Decodes a whole snapshot with the streaming reader (tests, benchmarks).
pub fn parse_streamed(bytes: &[u8], slice: usize) -> Result<Snapshot> {
    let mut r = SnapshotStream::new();
    for piece in bytes.chunks(slice.max(1)) {
        r.push(piece)?;
    }
    r.finish()
}
