//! A data-only pickle decoder (protocols 2–5) for `torch.cuda.memory._dump_snapshot` files.
//!
//! A pickle is a program for a small stack machine; Python's `pickle.load` runs it and may import and
//! call arbitrary code (`GLOBAL`, `REDUCE`, …). We only need the data: dicts, lists, tuples, strings,
//! ints, floats, bools and None, so this decoder implements exactly the opcodes that build those and
//! refuses every opcode that would import or call something ([`ErrorKind::Refused`] naming the opcode
//! and its offset). Spec: CPython `Lib/pickletools.py` (the opcode table) and PEP 3154 / PEP 574.
//!
//! Values live in an arena ([`Pickle::nodes`]) and refer to each other by [`NodeId`]. That is what the
//! memo needs: real snapshots fetch the same frame dict or file name hundreds of thousands of times
//! (`BINGET`), and a container memoized while empty is filled later (`EMPTY_DICT MEMOIZE … SETITEMS`),
//! so the memo must share the *same* container, not a copy. An arena gives both without `Rc<RefCell>`,
//! and a hostile self-referencing list is just an id cycle that consumers bound by depth.
//!
//! Limits, so hostile input cannot hang or exhaust memory: every declared length is checked against
//! the bytes that remain before anything is allocated; the node count is capped at [`MAX_NODES`]; the
//! `MARK` depth at [`MAX_MARK_DEPTH`]; each opcode consumes at least one byte, so decoding is linear.

use crate::error::{Error, ErrorKind, Result};

/// Index of a value in [`Pickle::nodes`].
pub type NodeId = u32;

/// At most this many values; each costs ~32 bytes, so the arena stays under ~2 GiB even for a 2 GiB
/// input (a value needs at least one opcode byte).
pub const MAX_NODES: usize = 1 << 26;
/// Open `MARK`s at once. Real snapshots nest 4–5 deep; anything near this is hostile.
pub const MAX_MARK_DEPTH: usize = 4096;
/// Values [`Pickle::to_json`] writes at most; the raw `allocator_settings` dict has ~30.
pub const MAX_JSON_VALUES: usize = 100_000;

/// One decoded value. Containers hold ids into the same arena.
#[derive(Debug, Clone, PartialEq)]
pub enum PickleValue {
    None,
    Bool(bool),
    Int(i64),
    /// An int that needs more than 64 bits but fits 128 (`LONG1`/`LONG4` of 9–16 bytes).
    BigInt(i128),
    /// An int wider than 128 bits, kept as its little-endian two's-complement bytes.
    HugeInt(Box<[u8]>),
    Float(f64),
    Str(Box<str>),
    Bytes(Box<[u8]>),
    List(Vec<NodeId>),
    Tuple(Vec<NodeId>),
    /// Insertion-ordered pairs, as Python dicts are; a repeated key keeps its last value.
    Dict(Vec<(NodeId, NodeId)>),
    /// `set` and `frozenset`.
    Set(Vec<NodeId>),
}

/// A decoded pickle: the arena and the root value.
#[derive(Debug, Clone)]
pub struct Pickle {
    pub nodes: Vec<PickleValue>,
    pub root: NodeId,
}

impl Pickle {
    pub fn get(&self, id: NodeId) -> &PickleValue {
        // Ids only come from this arena, so the index is always in range; `None` guards anyway.
        self.nodes.get(id as usize).unwrap_or(&PickleValue::None)
    }

    /// The value under a string key of a dict, if `id` is a dict holding it.
    pub fn dict_get(&self, id: NodeId, key: &str) -> Option<NodeId> {
        let PickleValue::Dict(pairs) = self.get(id) else {
            return None;
        };
        pairs
            .iter()
            .rev()
            .find(|(k, _)| self.as_str(*k) == Some(key))
            .map(|(_, v)| *v)
    }

    pub fn as_str(&self, id: NodeId) -> Option<&str> {
        match self.get(id) {
            PickleValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An integer (or bool) that fits `i128`.
    pub fn as_i128(&self, id: NodeId) -> Option<i128> {
        match self.get(id) {
            PickleValue::Int(i) => Some(i128::from(*i)),
            PickleValue::BigInt(i) => Some(*i),
            PickleValue::Bool(b) => Some(i128::from(*b)),
            _ => None,
        }
    }

    pub fn as_i64(&self, id: NodeId) -> Option<i64> {
        self.as_i128(id).and_then(|v| i64::try_from(v).ok())
    }

    pub fn as_u64(&self, id: NodeId) -> Option<u64> {
        self.as_i128(id).and_then(|v| u64::try_from(v).ok())
    }

    pub fn as_f64(&self, id: NodeId) -> Option<f64> {
        match self.get(id) {
            PickleValue::Float(f) => Some(*f),
            PickleValue::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub fn as_bool(&self, id: NodeId) -> Option<bool> {
        match self.get(id) {
            PickleValue::Bool(b) => Some(*b),
            PickleValue::Int(i) => Some(*i != 0),
            _ => None,
        }
    }

    /// The items of a list or tuple (empty for anything else).
    pub fn items(&self, id: NodeId) -> &[NodeId] {
        match self.get(id) {
            PickleValue::List(v) | PickleValue::Tuple(v) | PickleValue::Set(v) => v,
            _ => &[],
        }
    }

    /// Converts a value to JSON for keeping small unmodelled parts raw (`allocator_settings`).
    /// Depth-limited, so id cycles end as `null`, and limited to [`MAX_JSON_VALUES`] values in all,
    /// because memo sharing makes a DAG whose unfolding can be exponential (found by fuzzing).
    /// Non-string dict keys are stringified.
    pub fn to_json(&self, id: NodeId, depth: u32) -> serde_json::Value {
        let mut budget = MAX_JSON_VALUES;
        self.to_json_budget(id, depth, &mut budget)
    }

    fn to_json_budget(&self, id: NodeId, depth: u32, budget: &mut usize) -> serde_json::Value {
        use serde_json::Value;
        if depth == 0 || *budget == 0 {
            return Value::Null;
        }
        *budget -= 1;
        match self.get(id) {
            PickleValue::None => Value::Null,
            PickleValue::Bool(b) => Value::Bool(*b),
            PickleValue::Int(i) => Value::from(*i),
            PickleValue::BigInt(i) => match u64::try_from(*i) {
                Ok(u) => Value::from(u),
                Err(_) => Value::String(i.to_string()),
            },
            PickleValue::HugeInt(_) => Value::String("<int wider than 128 bits>".into()),
            PickleValue::Float(f) => {
                serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
            }
            PickleValue::Str(s) => Value::String(s.to_string()),
            PickleValue::Bytes(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
            PickleValue::List(v) | PickleValue::Tuple(v) | PickleValue::Set(v) => Value::Array(
                v.iter()
                    .map(|c| self.to_json_budget(*c, depth - 1, budget))
                    .collect(),
            ),
            PickleValue::Dict(pairs) => {
                let mut m = serde_json::Map::new();
                for (k, v) in pairs {
                    let key = match self.get(*k) {
                        PickleValue::Str(s) => s.to_string(),
                        _ => self
                            .to_json_budget(*k, (depth - 1).min(2), budget)
                            .to_string(),
                    };
                    m.insert(key, self.to_json_budget(*v, depth - 1, budget));
                }
                Value::Object(m)
            }
        }
    }
}

/// One stack slot: a value or a `MARK`.
#[derive(Clone, Copy)]
enum Slot {
    Val(NodeId),
    Mark,
}

struct Machine<'a> {
    b: &'a [u8],
    i: usize,
    nodes: Vec<PickleValue>,
    stack: Vec<Slot>,
    marks: Vec<usize>,
    memo: Vec<Option<NodeId>>,
}

fn opcode_name(op: u8) -> &'static str {
    match op {
        b'c' => "GLOBAL",
        0x93 => "STACK_GLOBAL",
        b'R' => "REDUCE",
        b'b' => "BUILD",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        b'i' => "INST",
        b'o' => "OBJ",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        b'I' => "INT",
        b'L' => "LONG",
        b'F' => "FLOAT",
        b'S' => "STRING",
        b'V' => "UNICODE",
        _ => "?",
    }
}

impl<'a> Machine<'a> {
    fn err(&self, kind: ErrorKind, at: usize) -> Error {
        Error::new(kind, at as u64)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let b: &'a [u8] = self.b;
        match b.get(self.i..).and_then(|r| r.get(..n)) {
            Some(s) => {
                self.i += n;
                Ok(s)
            }
            None => Err(self.err(ErrorKind::Truncated, b.len())),
        }
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
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

    fn push_node(&mut self, v: PickleValue, at: usize) -> Result<NodeId> {
        if self.nodes.len() >= MAX_NODES {
            return Err(self.err(
                ErrorKind::Limit(format!("more than {MAX_NODES} pickle values")),
                at,
            ));
        }
        let id = self.nodes.len() as NodeId;
        self.nodes.push(v);
        self.stack.push(Slot::Val(id));
        Ok(id)
    }

    fn pop(&mut self, at: usize) -> Result<NodeId> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err(ErrorKind::Syntax("pickle stack underflow".into()), at));
        }
        match self.stack.pop() {
            Some(Slot::Val(v)) => Ok(v),
            _ => Err(self.err(ErrorKind::Syntax("pickle stack underflow".into()), at)),
        }
    }

    fn top(&self, at: usize) -> Result<NodeId> {
        let floor = self.marks.last().copied().unwrap_or(0);
        match self.stack.last() {
            Some(Slot::Val(v)) if self.stack.len() > floor => Ok(*v),
            _ => Err(self.err(ErrorKind::Syntax("pickle stack underflow".into()), at)),
        }
    }

    /// Pops everything above the last MARK, and the MARK.
    fn pop_mark(&mut self, at: usize) -> Result<Vec<NodeId>> {
        let Some(m) = self.marks.pop() else {
            return Err(self.err(ErrorKind::Syntax("no MARK on the pickle stack".into()), at));
        };
        let items: Vec<NodeId> = self.stack[m + 1..]
            .iter()
            .filter_map(|s| match s {
                Slot::Val(v) => Some(*v),
                Slot::Mark => None,
            })
            .collect();
        self.stack.truncate(m);
        Ok(items)
    }

    fn memo_put(&mut self, idx: usize, at: usize) -> Result<()> {
        let v = self.top(at)?;
        // Memo indices are dense in practice (MEMOIZE counts up); a sparse huge index is bounded by
        // the node cap so a lying LONG_BINPUT cannot make us allocate 4G slots.
        if idx > self.nodes.len().saturating_add(1024) {
            return Err(self.err(
                ErrorKind::Limit(format!("memo index {idx} far beyond the values decoded")),
                at,
            ));
        }
        if self.memo.len() <= idx {
            self.memo.resize(idx + 1, None);
        }
        self.memo[idx] = Some(v);
        Ok(())
    }

    fn memo_get(&mut self, idx: usize, at: usize) -> Result<()> {
        match self.memo.get(idx).copied().flatten() {
            Some(v) => {
                self.stack.push(Slot::Val(v));
                Ok(())
            }
            None => Err(self.err(
                ErrorKind::Syntax(format!("memo index {idx} read before it was written")),
                at,
            )),
        }
    }

    fn container_mut(&mut self, id: NodeId) -> Option<&mut PickleValue> {
        self.nodes.get_mut(id as usize)
    }

    fn set_items(&mut self, dict: NodeId, kv: &[NodeId], at: usize) -> Result<()> {
        if !kv.len().is_multiple_of(2) {
            return Err(self.err(
                ErrorKind::Syntax("SETITEMS with an odd item count".into()),
                at,
            ));
        }
        match self.container_mut(dict) {
            Some(PickleValue::Dict(pairs)) => {
                pairs.extend(kv.chunks(2).map(|p| (p[0], p[1])));
                Ok(())
            }
            _ => Err(self.err(ErrorKind::Syntax("SETITEM(S) on a non-dict".into()), at)),
        }
    }

    fn append(&mut self, list: NodeId, items: &[NodeId], at: usize, what: &str) -> Result<()> {
        match self.container_mut(list) {
            Some(PickleValue::List(v)) | Some(PickleValue::Set(v)) => {
                v.extend_from_slice(items);
                Ok(())
            }
            _ => Err(self.err(ErrorKind::Syntax(format!("{what} on a non-list")), at)),
        }
    }

    fn run(mut self) -> Result<Pickle> {
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
                    self.take(8)?; // FRAME: a length hint; the opcodes inside are read as usual
                }
                b'.' => {
                    let root = self.pop(at)?;
                    return Ok(Pickle {
                        nodes: self.nodes,
                        root,
                    });
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
                    self.push_node(PickleValue::Int(i64::from(v)), at)?;
                }
                b'K' => {
                    let v = self.u8()?;
                    self.push_node(PickleValue::Int(i64::from(v)), at)?;
                }
                b'M' => {
                    let v = self.le(2)?;
                    self.push_node(PickleValue::Int(v as i64), at)?;
                }
                0x8a | 0x8b => {
                    let n = if op == 0x8a {
                        self.len(1, at)?
                    } else {
                        self.len(4, at)?
                    };
                    let bytes = self.take(n)?;
                    let v = decode_long(bytes);
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
                    let text: Box<str> = match std::str::from_utf8(s) {
                        Ok(t) => t.into(),
                        // Python writes surrogates with `surrogatepass`; keep the rest readable.
                        Err(_) => String::from_utf8_lossy(s).into_owned().into_boxed_str(),
                    };
                    self.push_node(PickleValue::Str(text), at)?;
                }
                b'C' | b'B' | 0x8e | 0x96 | b'U' | b'T' => {
                    let w = match op {
                        b'C' | b'U' => 1,
                        b'B' | b'T' => 4,
                        _ => 8,
                    };
                    let n = self.len(w, at)?;
                    let s = self.take(n)?;
                    self.push_node(PickleValue::Bytes(s.into()), at)?;
                }
                b'}' => {
                    self.push_node(PickleValue::Dict(Vec::new()), at)?;
                }
                b']' => {
                    self.push_node(PickleValue::List(Vec::new()), at)?;
                }
                b')' => {
                    self.push_node(PickleValue::Tuple(Vec::new()), at)?;
                }
                0x8f => {
                    self.push_node(PickleValue::Set(Vec::new()), at)?;
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
                    self.stack.push(Slot::Mark);
                }
                b'0' => {
                    // POP: drops the top value, or the top MARK when the stack ends in one.
                    if self
                        .marks
                        .last()
                        .is_some_and(|&m| m + 1 == self.stack.len())
                    {
                        self.pop_mark(at)?;
                    } else {
                        self.pop(at)?;
                    }
                }
                b'1' => {
                    let v = self.pop_mark(at)?;
                    let _ = v; // POP_MARK discards
                }
                b'2' => {
                    let v = self.top(at)?;
                    self.stack.push(Slot::Val(v));
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    let mut items = vec![0; n];
                    for k in (0..n).rev() {
                        items[k] = self.pop(at)?;
                    }
                    self.push_node(PickleValue::Tuple(items), at)?;
                }
                b't' => {
                    let items = self.pop_mark(at)?;
                    self.push_node(PickleValue::Tuple(items), at)?;
                }
                b'l' => {
                    let items = self.pop_mark(at)?;
                    self.push_node(PickleValue::List(items), at)?;
                }
                0x91 => {
                    let items = self.pop_mark(at)?;
                    self.push_node(PickleValue::Set(items), at)?;
                }
                b'd' => {
                    let items = self.pop_mark(at)?;
                    if !items.len().is_multiple_of(2) {
                        return Err(
                            self.err(ErrorKind::Syntax("DICT with an odd item count".into()), at)
                        );
                    }
                    let pairs = items.chunks(2).map(|p| (p[0], p[1])).collect();
                    self.push_node(PickleValue::Dict(pairs), at)?;
                }
                b's' => {
                    let v = self.pop(at)?;
                    let k = self.pop(at)?;
                    let d = self.top(at)?;
                    self.set_items(d, &[k, v], at)?;
                }
                b'u' => {
                    let kv = self.pop_mark(at)?;
                    let d = self.top(at)?;
                    self.set_items(d, &kv, at)?;
                }
                b'a' => {
                    let v = self.pop(at)?;
                    let l = self.top(at)?;
                    self.append(l, &[v], at, "APPEND")?;
                }
                b'e' | 0x90 => {
                    let items = self.pop_mark(at)?;
                    let l = self.top(at)?;
                    self.append(l, &items, at, "APPENDS")?;
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

/// `LONG1`/`LONG4` payload: little-endian two's complement of any width.
fn decode_long(bytes: &[u8]) -> PickleValue {
    if bytes.is_empty() {
        return PickleValue::Int(0);
    }
    if bytes.len() <= 16 {
        let neg = bytes[bytes.len() - 1] & 0x80 != 0;
        let mut buf = if neg { [0xffu8; 16] } else { [0u8; 16] };
        buf[..bytes.len()].copy_from_slice(bytes);
        let v = i128::from_le_bytes(buf);
        return match i64::try_from(v) {
            Ok(i) => PickleValue::Int(i),
            Err(_) => PickleValue::BigInt(v),
        };
    }
    PickleValue::HugeInt(bytes.into())
}

/// Decodes a whole pickle. Errors carry the byte offset of the opcode that failed.
pub fn decode(bytes: &[u8]) -> Result<Pickle> {
    let m = Machine {
        b: bytes,
        i: 0,
        nodes: Vec::new(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: Vec::new(),
    };
    m.run()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn decodes_a_memoized_dict_filled_after_memoize() {
        // pickle.dumps({'a': [1, 2], 'b': 'x'}, protocol=4)
        let p = b"\x80\x04\x95\x19\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a\x94]\x94(K\x01K\x02e\x8c\x01b\x94\x8c\x01x\x94u.";
        let v = decode(p).unwrap();
        let a = v.dict_get(v.root, "a").unwrap();
        assert_eq!(v.items(a).len(), 2);
        assert_eq!(v.as_i64(v.items(a)[1]), Some(2));
        assert_eq!(v.dict_get(v.root, "b").and_then(|b| v.as_str(b)), Some("x"));
    }

    #[test]
    fn longs_of_every_width() {
        assert_eq!(decode_long(&[]), PickleValue::Int(0));
        assert_eq!(decode_long(&[0xff]), PickleValue::Int(-1));
        assert_eq!(
            decode_long(&[0, 0, 0, 0, 0, 0, 0, 0x80, 0]),
            PickleValue::BigInt(1 << 63)
        );
        assert!(matches!(decode_long(&[1; 17]), PickleValue::HugeInt(_)));
    }

    #[test]
    fn global_is_refused_with_its_name_and_offset() {
        let e = decode(b"\x80\x02cos\nsystem\n.").unwrap_err();
        assert!(matches!(&e.kind, ErrorKind::Refused(m) if m.contains("GLOBAL")));
        assert_eq!(e.offset, 2);
    }

    /// Found by fuzzing: a dict keyed by a tuple holding the dict itself recursed without end,
    /// because keys were stringified at a fresh depth.
    #[test]
    fn regression_to_json_of_a_self_keyed_dict_terminates() {
        let v = decode(b"\x80\x04}\x94h\x00\x85Ns.").unwrap();
        let _ = v.to_json(v.root, 8).to_string();
    }

    /// Found by fuzzing: memo sharing unfolds exponentially; `to_json` stops at its value budget.
    #[test]
    fn regression_to_json_of_a_shared_dag_is_bounded() {
        // l0 = [] ; l(k+1) = [lk] * 64, eight levels deep, each level one memo entry.
        let mut b = b"\x80\x04]\x94".to_vec();
        for k in 0..8u8 {
            b.push(b']');
            b.push(0x94);
            b.push(b'(');
            for _ in 0..64 {
                b.extend_from_slice(&[b'h', k]);
            }
            b.push(b'e');
        }
        b.push(b'.');
        // Memo k+1 is the new list; its items are memo k (the previous list).
        let v = decode(&b).unwrap();
        let j = v.to_json(v.root, 12).to_string();
        assert!(j.len() < 10 * MAX_JSON_VALUES);
    }
}
