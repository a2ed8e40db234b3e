//! A frame dict read in one step: `{filename, line, name}` written by the pickler as
//! `EMPTY_DICT [memo put] MARK (key value)… SETITEMS`, with every key and string a memo fetch and
//! the line an int, is ~17 bytes and ten opcodes. A synthetic or large snapshot has millions of
//! them inside `frames` lists, and the opcode machine spent most of its time on them: a container
//! slot, a memo put, a mark, six pushes, the items copied into the dict, the dict examined when its
//! list is appended to, then released. Here the bytes are matched as a whole and become the frame
//! id at once; anything else (a new string, a float line, another key, the dict cut by the end of
//! the slice) leaves the bytes to the opcode machine, which reads them as before.
//!
//! Likewise a `frames` list whose items are all memo fetches of frames (a real snapshot's trace
//! entries fetch each frame dict met before: 40–70 fetches an entry) or frame dicts as above
//! (a snapshot whose frames are fresh dicts: the 50 MB bench file's 2.8 million) becomes its
//! stack id at once, with no push per frame, no copy into a container and no second pass over the
//! items to make the stack. A list that turns out otherwise is given back to the opcode machine as
//! it was: the memo slots its frame dicts took are taken back (only appended slots are taken in
//! the first place), and the frames it interned are those the machine interns again, in the same
//! order.
//!
//! Only inside a list that is the value of a `frames` key (a trace entry's, a block's, a
//! segment's), where the opcode machine makes every dict a frame too ([`super::build`]'s
//! `to_stack`), so both give the same model. (Two hostile exceptions: a `frames` list holding a
//! trace entry, with a frame dict after it in the same batch of items, where the opcode machine
//! reads that frame dict as an entry with an unknown action, this path as the frame it is; and a
//! frame dict given more items after its SETITEMS, which the machine takes, and this path
//! refuses, the dict being a frame already. `tests/snapshot_stream.rs` damages files at random
//! and finds no other.)

use super::build::{frame_id, stack_id};
use super::{
    Kind, SnapshotStream, MAX_STACK, M_FRAME, M_STACK, M_STR, M_UNSET, PAYLOAD, TAG_SHIFT, V,
};
use crate::ingest::pickle::MAX_MARK_DEPTH;
use crate::model::strings::StrId;

/// What a matched frame dict holds.
struct Matched {
    file: Option<StrId>,
    line: Option<i64>,
    name: Option<StrId>,
    /// Its memo slot, if the pickler memoized it.
    memo: Option<usize>,
    /// Values the opcode machine would have pushed (the dict and each key and value).
    pushed: u64,
    end: usize,
}

impl SnapshotStream {
    /// At an `EMPTY_DICT` at `d[at]`: the frame dict read whole, pushed as its frame id, and the
    /// offset after its `SETITEMS`; `None` leaves it to the opcode machine.
    pub(super) fn frame_dict(&mut self, d: &[u8], at: usize) -> Option<usize> {
        if !self.in_frames_list() || self.marks.len() >= MAX_MARK_DEPTH {
            return None;
        }
        let m = self.match_frame(d, at)?;
        if m.memo.is_some_and(|idx| !self.memo_index_ok(idx)) {
            return None;
        }
        if m.file.is_none() && m.line.is_none() {
            return None;
        }
        let f = frame_id(&mut self.b, m.file, m.name, m.line.unwrap_or(0));
        if let Some(idx) = m.memo {
            if self.memo.len() <= idx {
                self.memo.resize(idx + 1, M_UNSET);
            }
            if f > PAYLOAD {
                return None;
            }
            self.memo[idx] = (M_FRAME << TAG_SHIFT) | f;
        }
        self.values += m.pushed;
        self.frames_whole += 1;
        self.stack.push(V::Frame(f));
        Some(m.end)
    }

    /// At an `EMPTY_LIST` at `d[at]` that is a dict's `frames` value: the list read whole when it
    /// is `[memo put] MARK (memo fetch of a frame | frame dict)… APPENDS` in one batch, pushed as
    /// its stack id, and the offset after its `APPENDS`; `None` leaves it to the opcode machine,
    /// with the memo as it was.
    pub(super) fn frames_list(&mut self, d: &[u8], at: usize) -> Option<usize> {
        if self.stack.len() <= self.floor()
            || self.stack.last() != Some(&V::Str(self.b.k.frames))
            || self.marks.len() >= MAX_MARK_DEPTH
        {
            return None;
        }
        let before = self.memo.len();
        let (memo, mut i) = memo_put_at(d, at + 1, before)?;
        if *d.get(i)? != b'(' || memo.is_some_and(|idx| !self.memo_index_ok(idx)) {
            return None;
        }
        i += 1;
        // Frame dicts are read here only when every memo slot they and the list take is the next
        // one (as Python's pickler writes them): taking those back gives the memo as it was. The
        // list's slot is taken first, as the machine takes it.
        let appending = memo.is_none_or(|idx| idx == before);
        if appending && memo.is_some() {
            self.memo.push(M_UNSET);
        }
        let mut ids = std::mem::take(&mut self.b.ids);
        ids.clear();
        // Values the opcode machine would have pushed: the list, then each item's.
        let mut pushed = 1u64;
        let mut dicts = 0u64;
        let whole = loop {
            match d.get(i) {
                Some(b'e') => break true,
                Some(b'h' | b'j') => {
                    let Some(idx) = memo_index(d, &mut i) else {
                        break false;
                    };
                    match self.memo.get(idx) {
                        Some(&slot) if slot != M_UNSET && slot >> TAG_SHIFT == M_FRAME => {
                            ids.push(slot & PAYLOAD);
                            pushed += 1;
                        }
                        _ => break false,
                    }
                }
                Some(b'}') if appending && self.marks.len() + 1 < MAX_MARK_DEPTH => {
                    let Some(f) = self.list_frame(d, &mut i, self.values + pushed) else {
                        break false;
                    };
                    ids.push(f.0);
                    pushed += f.1;
                    dicts += 1;
                }
                _ => break false,
            }
        };
        i += 1;
        // A second batch (a list of over 1000 frames), or the end of the slice: the opcode machine.
        let ok = whole
            && !matches!(d.get(i), None | Some(b'('))
            && self.stack.len() + ids.len() < MAX_STACK;
        let id = if ok { stack_id(&mut self.b, &ids) } else { 0 };
        if !ok || (memo.is_some() && id > PAYLOAD) {
            self.b.ids = ids;
            self.memo.truncate(before);
            return None;
        }
        if let Some(idx) = memo {
            if self.memo.len() <= idx {
                self.memo.resize(idx + 1, M_UNSET);
            }
            self.memo[idx] = (M_STACK << TAG_SHIFT) | id;
        }
        self.values += pushed;
        self.stacks_whole += 1;
        self.frames_whole += dicts;
        self.b.ids = ids;
        self.stack.push(V::Stack(id));
        Some(i)
    }

    /// A frame dict at `d[*i]` inside a `frames` list read whole (`values`: what the machine
    /// would have pushed before it): its frame id and the values it stands for, `i` moved past
    /// it; its memo slot, if any, taken only when it is the next one.
    fn list_frame(&mut self, d: &[u8], i: &mut usize, values: u64) -> Option<(u32, u64)> {
        let m = self.match_frame(d, *i)?;
        if m.file.is_none() && m.line.is_none() {
            return None;
        }
        // The machine's bound on memo indices, with at most as many values as it would count.
        if m.memo.is_some_and(|idx| {
            idx != self.memo.len()
                || idx as u64 > values.saturating_add(1024)
                || idx >= M_UNSET as usize
        }) {
            return None;
        }
        let f = frame_id(&mut self.b, m.file, m.name, m.line.unwrap_or(0));
        if m.memo.is_some() {
            if f > PAYLOAD {
                return None;
            }
            self.memo.push((M_FRAME << TAG_SHIFT) | f);
        }
        *i = m.end;
        Some((f, m.pushed))
    }

    /// The opcode machine's bound on memo indices; past it, it reports the error.
    fn memo_index_ok(&self, idx: usize) -> bool {
        idx as u64 <= self.values.saturating_add(1024) && idx < M_UNSET as usize
    }

    /// The stack is `… "frames" [list] MARK …`: the next value goes into a `frames` list.
    fn in_frames_list(&self) -> bool {
        let Some(&m) = self.marks.last() else {
            return false;
        };
        let (Some(&V::Cont(list)), Some(&key)) = (
            m.checked_sub(1).and_then(|k| self.stack.get(k)),
            m.checked_sub(2).and_then(|k| self.stack.get(k)),
        ) else {
            return false;
        };
        key == V::Str(self.b.k.frames)
            && self
                .conts
                .get(list as usize)
                .is_some_and(|c| c.kind == Kind::List && c.trace.is_none())
    }

    /// A string already in the memo, fetched by `BINGET` / `LONG_BINGET` at `d[i]`.
    fn memo_str(&self, d: &[u8], i: &mut usize) -> Option<StrId> {
        let slot = *self.memo.get(memo_index(d, i)?)?;
        (slot != M_UNSET && slot >> TAG_SHIFT == M_STR).then_some(StrId(slot & PAYLOAD))
    }

    fn match_frame(&self, d: &[u8], at: usize) -> Option<Matched> {
        let (memo, i) = memo_put_at(d, at + 1, self.memo.len())?;
        let mut i = i;
        if *d.get(i)? != b'(' {
            return None;
        }
        i += 1;
        let k = &self.b.k;
        let mut m = Matched {
            file: None,
            line: None,
            name: None,
            memo,
            pushed: 1,
            end: 0,
        };
        loop {
            if *d.get(i)? == b'u' {
                m.end = i + 1;
                return Some(m);
            }
            let key = self.memo_str(d, &mut i)?;
            if key == k.line && m.line.is_none() {
                let (v, w) = match *d.get(i)? {
                    b'K' => (i64::from(*d.get(i + 1)?), 2),
                    b'M' => {
                        let b = d.get(i + 1..i + 3)?;
                        (i64::from(u16::from_le_bytes([b[0], b[1]])), 3)
                    }
                    b'J' => {
                        let b = d.get(i + 1..i + 5)?;
                        (i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])), 5)
                    }
                    _ => return None,
                };
                i += w;
                m.line = Some(v);
            } else if key == k.filename && m.file.is_none() {
                m.file = Some(self.memo_str(d, &mut i)?);
            } else if key == k.name && m.name.is_none() {
                m.name = Some(self.memo_str(d, &mut i)?);
            } else {
                return None;
            }
            m.pushed += 2;
        }
    }
}

/// The memo index of a `BINGET` / `LONG_BINGET` at `d[*i]`, moving `i` past it.
fn memo_index(d: &[u8], i: &mut usize) -> Option<usize> {
    match *d.get(*i)? {
        b'h' => {
            let x = *d.get(*i + 1)? as usize;
            *i += 2;
            Some(x)
        }
        b'j' => {
            let b = d.get(*i + 1..*i + 5)?;
            *i += 5;
            Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        }
        _ => None,
    }
}

/// The memo slot a `MEMOIZE` / `BINPUT` / `LONG_BINPUT` at `d[i]` writes (`next`: `MEMOIZE`'s),
/// if there is one, and the offset after it; `None` when the bytes stop there.
fn memo_put_at(d: &[u8], i: usize, next: usize) -> Option<(Option<usize>, usize)> {
    Some(match *d.get(i)? {
        0x94 => (Some(next), i + 1),
        b'q' => (Some(*d.get(i + 1)? as usize), i + 2),
        b'r' => {
            let b = d.get(i + 1..i + 5)?;
            (
                Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
                i + 5,
            )
        }
        _ => (None, i),
    })
}
