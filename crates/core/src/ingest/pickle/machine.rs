//! The pickle stack machine: runs the opcodes that build data into the [`Pickle`] arena and
//! refuses every opcode that would import or call code (the module doc of [`super`] says why and
//! what the limits are). Kept apart from the arena and its read API, which the snapshot and Flight
//! Recorder readers use. The opcode names and the `LONG` payload it shares with the streamed
//! snapshot reader live in `codes.rs`.

use super::codes::{decode_long, opcode_name, Long};
use super::{
    NodeId, Pickle, PickleValue, Seq, Span, INLINE_INT, MAX_ITEMS, MAX_MARK_DEPTH, MAX_NODES,
};
use crate::error::{Error, ErrorKind, Result};

/// Memo slot not yet written.
const UNSET: NodeId = NodeId::MAX;

pub(super) struct Machine<'a> {
    pub(super) b: &'a [u8],
    pub(super) i: usize,
    pub(super) p: Pickle,
    /// Value ids; `MARK`s are kept apart in `marks` as stack positions.
    pub(super) stack: Vec<NodeId>,
    pub(super) marks: Vec<usize>,
    pub(super) memo: Vec<NodeId>,
    /// Values pushed so far (arena or inline): bounds memo indices.
    pub(super) values: usize,
}

impl<'a> Machine<'a> {
    fn err(&self, kind: ErrorKind, at: usize) -> Error {
        Error::new(kind, at as u64)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let b: &'a [u8] = self.b;
        match b.get(self.i..).and_then(|r| r.get(..n)) {
            Some(s) => {
                self.i += n;
                Ok(s)
            }
            None => Err(self.truncated()),
        }
    }

    /// Error paths are out of line so the opcode loop's hot paths stay small enough to inline.
    #[cold]
    #[inline(never)]
    fn truncated(&self) -> Error {
        self.err(ErrorKind::Truncated, self.b.len())
    }

    #[cold]
    #[inline(never)]
    fn syntax(&self, msg: String, at: usize) -> Error {
        self.err(ErrorKind::Syntax(msg), at)
    }

    #[inline]
    fn u8(&mut self) -> Result<u8> {
        match self.b.get(self.i) {
            Some(&v) => {
                self.i += 1;
                Ok(v)
            }
            None => Err(self.truncated()),
        }
    }

    fn le(&mut self, n: usize) -> Result<u64> {
        let s = self.take(n)?;
        Ok(s.iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    /// A declared length, checked against what remains so nothing huge is allocated on a lie: one
    /// that runs a little past the end is truncation; one beyond 4 GiB and the input is a lie.
    fn len(&mut self, width: usize, at: usize) -> Result<usize> {
        let n = self.le(width)?;
        let remaining = (self.b.len() - self.i) as u64;
        if n <= remaining {
            return Ok(n as usize);
        }
        if n > 1 << 32 {
            return Err(self.err(
                ErrorKind::Limit(format!(
                    "declared length {n} exceeds the {remaining} bytes that remain"
                )),
                at,
            ));
        }
        Err(self.err(ErrorKind::Truncated, at))
    }

    fn limit(&self, what: &str, at: usize) -> Error {
        self.err(ErrorKind::Limit(format!("more than {what}")), at)
    }

    /// Pushes an int, inline when it fits (see [`INLINE_INT`]).
    #[inline]
    fn push_int(&mut self, v: i64, at: usize) -> Result<()> {
        match u32::try_from(v) {
            Ok(u) if u < INLINE_INT - 1 => {
                self.values += 1;
                self.stack.push(INLINE_INT | u);
                Ok(())
            }
            _ => self.push_node(PickleValue::Int(v), at).map(|_| ()),
        }
    }

    #[inline]
    fn push_node(&mut self, v: PickleValue, at: usize) -> Result<NodeId> {
        if self.p.nodes.len() >= MAX_NODES {
            return Err(self.limit(&format!("{MAX_NODES} pickle values"), at));
        }
        let id = self.p.nodes.len() as NodeId;
        self.values += 1;
        self.p.nodes.push(v);
        self.stack.push(id);
        Ok(id)
    }

    /// Appends `s` to a side buffer of at most 4 GiB (offsets are `u32`) and returns its span.
    fn span_in(buf_len: usize, n: usize) -> Option<Span> {
        let start = u32::try_from(buf_len).ok()?;
        let len = u32::try_from(n).ok()?;
        start.checked_add(len)?;
        Some(Span { start, len })
    }

    fn push_str(&mut self, s: &[u8], at: usize) -> Result<()> {
        let lossy;
        let t: &str = match std::str::from_utf8(s) {
            Ok(t) => t,
            // Python writes surrogates with `surrogatepass`; keep the rest readable.
            Err(_) => {
                lossy = String::from_utf8_lossy(s);
                &lossy
            }
        };
        let Some(span) = Self::span_in(self.p.text.len(), t.len()) else {
            return Err(self.limit("4 GiB of pickle text", at));
        };
        self.p.text.push_str(t);
        self.push_node(PickleValue::Str(span), at)?;
        Ok(())
    }

    fn push_data(&mut self, s: &[u8], at: usize) -> Result<Span> {
        let Some(span) = Self::span_in(self.p.data.len(), s.len()) else {
            return Err(self.limit("4 GiB of pickle bytes", at));
        };
        self.p.data.extend_from_slice(s);
        Ok(span)
    }

    #[inline]
    fn floor(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    fn pop(&mut self, at: usize) -> Result<NodeId> {
        if self.stack.len() <= self.floor() {
            return Err(self.err(ErrorKind::Syntax("pickle stack underflow".into()), at));
        }
        self.stack
            .pop()
            .ok_or_else(|| self.err(ErrorKind::Syntax("pickle stack underflow".into()), at))
    }

    #[inline]
    fn top(&self, at: usize) -> Result<NodeId> {
        match self.stack.last() {
            Some(&v) if self.stack.len() > self.floor() => Ok(v),
            _ => Err(self.syntax("pickle stack underflow".into(), at)),
        }
    }

    /// The value just below stack position `m` (a popped MARK's), if above the current floor.
    #[inline]
    fn below(&self, m: usize, at: usize) -> Result<NodeId> {
        match m.checked_sub(1).and_then(|k| self.stack.get(k)) {
            Some(&v) if m > self.floor() => Ok(v),
            _ => Err(self.syntax("pickle stack underflow".into(), at)),
        }
    }

    /// Pops the last MARK; the values above it are `stack[start..]` (the caller truncates).
    #[inline]
    fn pop_mark(&mut self, at: usize) -> Result<usize> {
        match self.marks.pop() {
            Some(m) => Ok(m),
            None => Err(self.syntax("no MARK on the pickle stack".into(), at)),
        }
    }

    #[inline]
    fn mark_shared(&mut self, id: NodeId) {
        if id & INLINE_INT != 0 {
            return; // an int: nothing to share
        }
        let w = id as usize / 64;
        if self.p.shared.len() <= w {
            self.p.shared.resize(w + 1, 0);
        }
        self.p.shared[w] |= 1 << (id % 64);
    }

    #[inline]
    fn memo_put(&mut self, idx: usize, at: usize) -> Result<()> {
        let v = self.top(at)?;
        if idx == self.memo.len() {
            self.memo.push(v); // MEMOIZE: the common case
            return Ok(());
        }
        // Memo indices are dense in practice (MEMOIZE counts up); a sparse huge index is bounded by
        // the node cap so a lying LONG_BINPUT cannot make us allocate 4G slots.
        if idx > self.values.saturating_add(1024) {
            return Err(self.err(
                ErrorKind::Limit(format!("memo index {idx} far beyond the values decoded")),
                at,
            ));
        }
        if self.memo.len() <= idx {
            self.memo.resize(idx + 1, UNSET);
        }
        self.memo[idx] = v;
        Ok(())
    }

    #[inline]
    fn memo_get(&mut self, idx: usize, at: usize) -> Result<()> {
        match self.memo.get(idx).copied() {
            Some(v) if v != UNSET => {
                self.mark_shared(v);
                self.stack.push(v);
                Ok(())
            }
            _ => Err(self.syntax(format!("memo index {idx} read before it was written"), at)),
        }
    }

    /// A new container node holding `stack[from..]`, which is popped.
    fn build(&mut self, from: usize, make: fn(Seq) -> PickleValue, at: usize) -> Result<()> {
        let n = self.stack.len().saturating_sub(from);
        let start = self.p.items.len();
        if start + n > MAX_ITEMS {
            return Err(self.limit(&format!("{MAX_ITEMS} pickle container items"), at));
        }
        self.p.items.extend_from_slice(&self.stack[from..]);
        self.stack.truncate(from);
        let seq = Seq {
            start: start as u32,
            len: n as u32,
            cap: n as u32,
        };
        self.push_node(make(seq), at)?;
        Ok(())
    }

    /// Appends `stack[from..]` (then popped) to container `c`'s items: in place when there is
    /// room or the span ends the buffer, else moved to the end with slack (amortized O(1)).
    /// `what` names the opcode for errors; `SETITEM(S)` extend dicts, the others lists and sets.
    fn extend(&mut self, c: NodeId, from: usize, at: usize, what: &str) -> Result<()> {
        let is_dict = what.starts_with("SETITEM");
        let seq = match self.p.nodes.get(c as usize) {
            Some(PickleValue::Dict(s)) if is_dict => *s,
            Some(PickleValue::List(s)) | Some(PickleValue::Set(s)) if !is_dict => *s,
            _ => {
                let on = if is_dict { "a non-dict" } else { "a non-list" };
                return Err(self.err(ErrorKind::Syntax(format!("{what} on {on}")), at));
            }
        };
        let n = self.stack.len().saturating_sub(from);
        if is_dict && !n.is_multiple_of(2) {
            return Err(self.err(
                ErrorKind::Syntax("SETITEMS with an odd item count".into()),
                at,
            ));
        }
        let items = &mut self.p.items;
        let (start, len, cap) = (seq.start as usize, seq.len as usize, seq.cap as usize);
        let new = if len == 0 || start + cap == items.len() {
            // Empty, or last in the buffer: grow in place (an empty span simply restarts at the end).
            let start = if len == 0 { items.len() } else { start };
            if start + len + n > MAX_ITEMS {
                return Err(self.limit(&format!("{MAX_ITEMS} pickle container items"), at));
            }
            items.truncate(start + len);
            items.extend_from_slice(&self.stack[from..]);
            (start, len + n, len + n)
        } else if len + n <= cap {
            items[start + len..start + len + n].copy_from_slice(&self.stack[from..]);
            (start, len + n, cap)
        } else {
            let new_cap = (len + n).max(2 * len);
            let new_start = items.len();
            if new_start + new_cap > MAX_ITEMS {
                return Err(self.limit(&format!("{MAX_ITEMS} pickle container items"), at));
            }
            items.extend_from_within(start..start + len);
            items.extend_from_slice(&self.stack[from..]);
            items.resize(new_start + new_cap, 0);
            (new_start, len + n, new_cap)
        };
        self.stack.truncate(from);
        let seq = Seq {
            start: new.0 as u32,
            len: new.1 as u32,
            cap: new.2 as u32,
        };
        if let Some(PickleValue::Dict(s) | PickleValue::List(s) | PickleValue::Set(s)) =
            self.p.nodes.get_mut(c as usize)
        {
            *s = seq;
        }
        Ok(())
    }

    pub(super) fn run(mut self) -> Result<Pickle> {
        loop {
            let at = self.i;
            let op = self.u8()?;
            match op {
                0x80 => {
                    let p = self.u8()?;
                    if p > 5 {
                        return Err(self.err(
                            ErrorKind::Incompatible(format!("pickle protocol {p} (2–5 supported)")),
                            at,
                        ));
                    }
                }
                0x95 => {
                    // FRAME: the opcodes inside are read as usual, but like CPython's unpickler
                    // a frame longer than what remains is a truncated (or lying) file.
                    self.len(8, at)?;
                }
                b'.' => {
                    let root = self.pop(at)?;
                    let mut p = self.p;
                    p.root = root;
                    return Ok(p);
                }
                b'N' => {
                    self.push_node(PickleValue::None, at)?;
                }
                0x88 => {
                    self.push_node(PickleValue::Bool(true), at)?;
                }
                0x89 => {
                    self.push_node(PickleValue::Bool(false), at)?;
                }
                b'J' => {
                    let v = self.le(4)? as u32 as i32;
                    self.push_int(i64::from(v), at)?;
                }
                b'K' => {
                    let v = self.u8()?;
                    self.push_int(i64::from(v), at)?;
                }
                b'M' => {
                    let v = self.le(2)?;
                    self.push_int(v as i64, at)?;
                }
                0x8a | 0x8b => {
                    let n = if op == 0x8a {
                        self.len(1, at)?
                    } else {
                        self.len(4, at)?
                    };
                    let bytes = self.take(n)?;
                    let v = match decode_long(bytes) {
                        Long::Small(i) => {
                            self.push_int(i, at)?;
                            continue;
                        }
                        Long::Big(v) => {
                            let k = self.p.big_ints.len() as u32;
                            self.p.big_ints.push(v);
                            PickleValue::BigInt(k)
                        }
                        Long::Huge => PickleValue::HugeInt(self.push_data(bytes, at)?),
                    };
                    self.push_node(v, at)?;
                }
                b'G' => {
                    let s = self.take(8)?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(s);
                    self.push_node(PickleValue::Float(f64::from_be_bytes(a)), at)?;
                }
                0x8c | b'X' | 0x8d => {
                    let w = match op {
                        0x8c => 1,
                        b'X' => 4,
                        _ => 8,
                    };
                    let n = self.len(w, at)?;
                    let s = self.take(n)?;
                    self.push_str(s, at)?;
                }
                b'C' | b'B' | 0x8e | 0x96 | b'U' | b'T' => {
                    let w = match op {
                        b'C' | b'U' => 1,
                        b'B' | b'T' => 4,
                        _ => 8,
                    };
                    let n = self.len(w, at)?;
                    let s = self.take(n)?;
                    let span = self.push_data(s, at)?;
                    self.push_node(PickleValue::Bytes(span), at)?;
                }
                b'}' => {
                    self.push_node(PickleValue::Dict(Seq::default()), at)?;
                }
                b']' => {
                    self.push_node(PickleValue::List(Seq::default()), at)?;
                }
                b')' => {
                    self.push_node(PickleValue::Tuple(Seq::default()), at)?;
                }
                0x8f => {
                    self.push_node(PickleValue::Set(Seq::default()), at)?;
                }
                b'(' => {
                    if self.marks.len() >= MAX_MARK_DEPTH {
                        return Err(self.err(
                            ErrorKind::Limit(format!(
                                "pickle nesting deeper than {MAX_MARK_DEPTH} MARKs"
                            )),
                            at,
                        ));
                    }
                    self.marks.push(self.stack.len());
                }
                b'0' => {
                    // POP: drops the top value, or the top MARK when the stack ends in one.
                    if self.marks.last() == Some(&self.stack.len()) {
                        self.marks.pop();
                    } else {
                        self.pop(at)?;
                    }
                }
                b'1' => {
                    let m = self.pop_mark(at)?; // POP_MARK discards
                    self.stack.truncate(m);
                }
                b'2' => {
                    let v = self.top(at)?;
                    self.mark_shared(v);
                    self.stack.push(v);
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    if self.stack.len() < self.floor() + n {
                        return Err(
                            self.err(ErrorKind::Syntax("pickle stack underflow".into()), at)
                        );
                    }
                    let from = self.stack.len() - n;
                    self.build(from, PickleValue::Tuple, at)?;
                }
                b't' => {
                    let m = self.pop_mark(at)?;
                    self.build(m, PickleValue::Tuple, at)?;
                }
                b'l' => {
                    let m = self.pop_mark(at)?;
                    self.build(m, PickleValue::List, at)?;
                }
                0x91 => {
                    let m = self.pop_mark(at)?;
                    self.build(m, PickleValue::Set, at)?;
                }
                b'd' => {
                    let m = self.pop_mark(at)?;
                    if !(self.stack.len() - m).is_multiple_of(2) {
                        return Err(
                            self.err(ErrorKind::Syntax("DICT with an odd item count".into()), at)
                        );
                    }
                    self.build(m, PickleValue::Dict, at)?;
                }
                b's' => {
                    if self.stack.len() < self.floor() + 3 {
                        return Err(
                            self.err(ErrorKind::Syntax("pickle stack underflow".into()), at)
                        );
                    }
                    let from = self.stack.len() - 2;
                    let d = self.stack[from - 1];
                    self.extend(d, from, at, "SETITEM")?;
                }
                b'u' => {
                    let m = self.pop_mark(at)?;
                    let d = self.below(m, at)?;
                    self.extend(d, m, at, "SETITEMS")?;
                }
                b'a' => {
                    if self.stack.len() < self.floor() + 2 {
                        return Err(
                            self.err(ErrorKind::Syntax("pickle stack underflow".into()), at)
                        );
                    }
                    let from = self.stack.len() - 1;
                    let l = self.stack[from - 1];
                    self.extend(l, from, at, "APPEND")?;
                }
                b'e' | 0x90 => {
                    let m = self.pop_mark(at)?;
                    let l = self.below(m, at)?;
                    self.extend(l, m, at, "APPENDS")?;
                }
                0x94 => {
                    let idx = self.memo.len();
                    self.memo_put(idx, at)?;
                }
                b'q' => {
                    let idx = self.u8()? as usize;
                    self.memo_put(idx, at)?;
                }
                b'r' => {
                    let idx = self.le(4)? as usize;
                    self.memo_put(idx, at)?;
                }
                b'h' => {
                    let idx = self.u8()? as usize;
                    self.memo_get(idx, at)?;
                }
                b'j' => {
                    let idx = self.le(4)? as usize;
                    self.memo_get(idx, at)?;
                }
                b'c' | 0x93 | b'R' | b'b' | 0x81 | 0x92 | b'i' | b'o' | 0x82 | 0x83 | 0x84
                | b'P' | b'Q' | 0x97 | 0x98 => {
                    return Err(self.err(
                        ErrorKind::Refused(format!(
                            "pickle opcode {} (0x{op:02x}) at byte {at} would import or call code; \
                             only plain data (dicts, lists, numbers, strings) is decoded",
                            opcode_name(op)
                        )),
                        at,
                    ));
                }
                b'I' | b'L' | b'F' | b'S' | b'V' | b'p' | b'g' => {
                    return Err(self.err(
                        ErrorKind::Refused(format!(
                            "pickle protocol 0 text opcode {} (0x{op:02x}) at byte {at}: \
                             only protocols 2–5 are supported",
                            opcode_name(op)
                        )),
                        at,
                    ));
                }
                other => {
                    return Err(self.err(
                        ErrorKind::Syntax(format!("unknown pickle opcode 0x{other:02x}")),
                        at,
                    ));
                }
            }
        }
    }
}
