//! The opcode table of the streaming reader: one opcode at a time, its argument bytes checked to
//! be all there first (an opcode cut by the end of a slice waits for the next without having done
//! anything), the same opcodes, refusals and limits as [`crate::ingest::pickle`].

use super::{Kind, SnapshotStream, Stop, MAX_STACK, PAYLOAD, V};
use crate::error::{Error, ErrorKind};
use crate::ingest::pickle::{decode_long, opcode_name, Long, MAX_MARK_DEPTH};

impl SnapshotStream {
    /// One opcode at `d[*i]`; `false` after STOP.
    pub(super) fn op(&mut self, d: &[u8], i: &mut usize) -> std::result::Result<bool, Stop> {
        let at = *i;
        // The argument bytes of the opcode at `at`, or `More` when not all pushed yet.
        let arg = |from: usize, n: usize| -> std::result::Result<&[u8], Stop> {
            d.get(from..from.saturating_add(n)).ok_or(Stop::More(at))
        };
        let le = |b: &[u8]| {
            b.iter()
                .rev()
                .fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
        };
        let Some(&op) = d.get(at) else {
            return Err(Stop::More(at));
        };
        if self.stack.len() >= MAX_STACK {
            return Err(Stop::Fail(self.err(
                ErrorKind::Limit(format!("more than {MAX_STACK} pickle values on its stack")),
                at,
            )));
        }
        let mut next = at + 1;
        let base = self.base;
        // A declared length: its width, then that many bytes.
        let sized = |w: usize| -> std::result::Result<(&[u8], usize), Stop> {
            let n = le(arg(at + 1, w)?);
            if n > 1 << 32 {
                return Err(Stop::Fail(Error::new(
                    ErrorKind::Limit(format!(
                        "declared length {n} exceeds the 4 GiB a pickle value may have"
                    )),
                    base + at as u64,
                )));
            }
            let s = arg(at + 1 + w, n as usize)?;
            Ok((s, at + 1 + w + n as usize))
        };
        match op {
            0x80 => {
                let p = arg(at + 1, 1)?[0];
                if p > 5 {
                    return Err(Stop::Fail(self.err(
                        ErrorKind::Incompatible(format!("pickle protocol {p} (2–5 supported)")),
                        at,
                    )));
                }
                next += 1;
            }
            0x95 => {
                // FRAME: the opcodes inside are read as usual; a length no file has is a lie.
                let n = le(arg(at + 1, 8)?);
                if n > 1 << 32 {
                    return Err(Stop::Fail(self.err(
                        ErrorKind::Limit(format!(
                            "declared length {n} exceeds the 4 GiB a pickle frame may have"
                        )),
                        at,
                    )));
                }
                next += 8;
            }
            b'.' => {
                let root = self.pop(at)?;
                self.root = Some(root);
                *i = next;
                return Ok(false);
            }
            b'N' => self.push_v(V::None),
            0x88 => self.push_v(V::Bool(true)),
            0x89 => self.push_v(V::Bool(false)),
            b'J' => {
                let v = le(arg(at + 1, 4)?) as u32 as i32;
                self.push_v(V::Int(i64::from(v)));
                next += 4;
            }
            b'K' => {
                let v = arg(at + 1, 1)?[0];
                self.push_v(V::Int(i64::from(v)));
                next += 1;
            }
            b'M' => {
                let v = le(arg(at + 1, 2)?);
                self.push_v(V::Int(v as i64));
                next += 2;
            }
            0x8a | 0x8b => {
                let (b, n) = sized(if op == 0x8a { 1 } else { 4 })?;
                let v = match decode_long(b) {
                    Long::Small(v) => V::Int(v),
                    Long::Big(v) => {
                        self.big.push(v);
                        V::Big((self.big.len() - 1) as u32)
                    }
                    Long::Huge => V::Huge,
                };
                self.push_v(v);
                next = n;
            }
            b'G' => {
                let mut a = [0u8; 8];
                a.copy_from_slice(arg(at + 1, 8)?);
                self.push_v(V::Float(f64::from_be_bytes(a)));
                next += 8;
            }
            0x8c | b'X' | 0x8d => {
                let (s, n) = sized(match op {
                    0x8c => 1,
                    b'X' => 4,
                    _ => 8,
                })?;
                let v = self.str_value(s);
                self.push_v(v);
                next = n;
            }
            b'C' | b'B' | 0x8e | 0x96 | b'U' | b'T' => {
                let (s, n) = sized(match op {
                    b'C' | b'U' => 1,
                    b'B' | b'T' => 4,
                    _ => 8,
                })?;
                if self.bytes.len() >= PAYLOAD as usize {
                    return Err(Stop::Fail(
                        self.err(ErrorKind::Limit("too many pickle bytes values".into()), at),
                    ));
                }
                self.bytes.push(Box::from(s));
                self.push_v(V::Bytes((self.bytes.len() - 1) as u32));
                next = n;
            }
            b'}' => match self.frame_dict(d, at) {
                Some(end) => next = end,
                None => self.open(Kind::Dict, at)?,
            },
            b']' => match self.frames_list(d, at) {
                Some(end) => next = end,
                None => self.open(Kind::List, at)?,
            },
            b')' => self.open(Kind::Tuple, at)?,
            0x8f => self.open(Kind::Set, at)?,
            b'(' => {
                if self.marks.len() >= MAX_MARK_DEPTH {
                    return Err(Stop::Fail(self.err(
                        ErrorKind::Limit(format!(
                            "pickle nesting deeper than {MAX_MARK_DEPTH} MARKs"
                        )),
                        at,
                    )));
                }
                self.marks.push(self.stack.len());
            }
            b'0' => {
                if self.marks.last() == Some(&self.stack.len()) {
                    self.marks.pop();
                } else {
                    self.pop(at)?;
                }
            }
            b'1' => {
                let m = self.pop_mark(at)?;
                self.stack.truncate(m);
            }
            b'2' => self.dup(at)?,
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                if self.stack.len() < self.floor() + n {
                    return Err(self.syntax("pickle stack underflow", at));
                }
                let from = self.stack.len() - n;
                self.build(Kind::Tuple, from, at)?;
            }
            b't' | b'l' | 0x91 => {
                let m = self.pop_mark(at)?;
                let kind = match op {
                    b't' => Kind::Tuple,
                    b'l' => Kind::List,
                    _ => Kind::Set,
                };
                self.build(kind, m, at)?;
            }
            b'd' => {
                let m = self.pop_mark(at)?;
                if !(self.stack.len() - m).is_multiple_of(2) {
                    return Err(self.syntax("DICT with an odd item count", at));
                }
                self.build(Kind::Dict, m, at)?;
            }
            b's' | b'a' => {
                let n = if op == b's' { 2 } else { 1 };
                if self.stack.len() < self.floor() + n + 1 {
                    return Err(self.syntax("pickle stack underflow", at));
                }
                let from = self.stack.len() - n;
                let c = self.stack[from - 1];
                self.extend(c, from, at, op == b's')?;
            }
            b'u' | b'e' | 0x90 => {
                let m = self.pop_mark(at)?;
                let c = self.below(m, at)?;
                self.extend(c, m, at, op == b'u')?;
            }
            0x94 => {
                let idx = self.memo.len();
                self.memo_put(idx, at)?;
            }
            b'q' => {
                let idx = arg(at + 1, 1)?[0] as usize;
                self.memo_put(idx, at)?;
                next += 1;
            }
            b'r' => {
                let idx = le(arg(at + 1, 4)?) as usize;
                self.memo_put(idx, at)?;
                next += 4;
            }
            b'h' | b'j' => {
                // A run of memo fetches is taken in one go: a trace entry's frames list is 40–70
                // of them, most of a real snapshot's bytes. The run stops before an opcode cut by
                // the slice's end (the next call waits for its bytes) or a full stack (the next
                // call refuses it).
                let mut k = at;
                loop {
                    let (idx, w) = match d.get(k) {
                        Some(b'h') => match d.get(k + 1) {
                            Some(&x) => (x as usize, 2),
                            None => break,
                        },
                        Some(b'j') => match d.get(k + 1..k + 5) {
                            Some(b) => (le(b) as usize, 5),
                            None => break,
                        },
                        _ => break,
                    };
                    if k > at && self.stack.len() >= MAX_STACK {
                        break;
                    }
                    self.memo_get(idx, k)?;
                    k += w;
                }
                if k == at {
                    return Err(Stop::More(at));
                }
                next = k;
            }
            b'c' | 0x93 | b'R' | b'b' | 0x81 | 0x92 | b'i' | b'o' | 0x82 | 0x83 | 0x84 | b'P'
            | b'Q' | 0x97 | 0x98 => {
                return Err(Stop::Fail(self.err(
                    ErrorKind::Refused(format!(
                        "pickle opcode {} (0x{op:02x}) at byte {} would import or call code; \
                         only plain data (dicts, lists, numbers, strings) is decoded",
                        opcode_name(op),
                        self.base + at as u64
                    )),
                    at,
                )));
            }
            b'I' | b'L' | b'F' | b'S' | b'V' | b'p' | b'g' => {
                return Err(Stop::Fail(self.err(
                    ErrorKind::Refused(format!(
                        "pickle protocol 0 text opcode {} (0x{op:02x}) at byte {}: \
                         only protocols 2–5 are supported",
                        opcode_name(op),
                        self.base + at as u64
                    )),
                    at,
                )));
            }
            other => {
                return Err(self.syntax(&format!("unknown pickle opcode 0x{other:02x}"), at));
            }
        }
        *i = next;
        Ok(true)
    }
}
