//! A data-only pickle decoder (protocols 2–5) for `torch.cuda.memory._dump_snapshot` files.
//!
//! A pickle is a program for a small stack machine; Python's `pickle.load` runs it and may import and
//! call arbitrary code (`GLOBAL`, `REDUCE`, …). We only need the data: dicts, lists, tuples, strings,
//! ints, floats, bools and None, so this decoder implements exactly the opcodes that build those and
//! refuses every opcode that would import or call something ([`crate::error::ErrorKind::Refused`] naming the opcode
//! and its offset). Spec: CPython `Lib/pickletools.py` (the opcode table) and PEP 3154 / PEP 574.
//!
//! Values live in an arena ([`Pickle::nodes`]) and refer to each other by [`NodeId`]. That is what the
//! memo needs: real snapshots fetch the same frame dict or file name hundreds of thousands of times
//! (`BINGET`), and a container memoized while empty is filled later (`EMPTY_DICT MEMOIZE … SETITEMS`),
//! so the memo must share the *same* container, not a copy. An arena gives both without `Rc<RefCell>`,
//! and a hostile self-referencing list is just an id cycle that consumers bound by depth.
//!
//! The arena is flat so that a 50 MB snapshot (millions of small frame dicts) costs no allocation per
//! value: a node is 16 bytes; strings are spans of one shared text buffer ([`Pickle::text`]), bytes
//! and huge ints spans of another; container items are spans ([`Seq`]) of one id buffer
//! ([`Pickle::items`]). Pickle fills containers in batches (`SETITEMS`/`APPENDS`, usually one batch,
//! written right after the items were built), so a container's span is almost always at the end of
//! the buffer and grows in place; when it is not, it moves to the end with as much slack again, like a
//! `Vec` doubling, so appends stay amortized O(1) and the buffer at most ~4× the items it holds.
//! Nodes fetched from the memo more than once are flagged ([`Pickle::is_shared`]): only those are
//! worth caching by id downstream.
//!
//! Limits, so hostile input cannot hang or exhaust memory: every declared length is checked against
//! the bytes that remain before anything is allocated; the node count is capped at [`MAX_NODES`], the
//! item buffer at [`MAX_ITEMS`]; the `MARK` depth at [`MAX_MARK_DEPTH`]; each opcode consumes at least
//! one byte, so decoding is linear.

use crate::error::Result;

mod codes;
mod machine;
pub(crate) use codes::{decode_long, opcode_name, Long};
use machine::Machine;

/// A value: an index into [`Pickle::nodes`], or with the top bit ([`INLINE_INT`]) set, a small
/// non-negative int held in the id itself. Ints are half the values of a snapshot (every frame's
/// `line`, every entry's sizes and addresses below 2^31), and an inline one costs no arena slot.
pub type NodeId = u32;

/// The tag bit of an int held in its [`NodeId`]; ints in `0..INLINE_INT - 1` are inline (not
/// `u32::MAX`, which the memo uses for "unset").
pub const INLINE_INT: NodeId = 1 << 31;

/// At most this many values; each costs 16 bytes, so the arena stays under 1 GiB even for a 2 GiB
/// input (a value needs at least one opcode byte).
pub const MAX_NODES: usize = 1 << 26;
/// At most this many container item slots (4 bytes each, slack included).
pub const MAX_ITEMS: usize = 1 << 28;
/// Open `MARK`s at once. Real snapshots nest 4–5 deep; anything near this is hostile.
pub const MAX_MARK_DEPTH: usize = 4096;
/// Values [`Pickle::to_json`] writes at most; the raw `allocator_settings` dict has ~30.
pub const MAX_JSON_VALUES: usize = 100_000;

/// A byte range of [`Pickle::text`] or [`Pickle::data`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

/// A container's items: `Pickle::items[start..start + len]`; `cap` reserves room to grow in place.
/// A dict's items are its keys and values interleaved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Seq {
    pub start: u32,
    pub len: u32,
    cap: u32,
}

impl Seq {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// One decoded value, 16 bytes. Payloads that do not fit live in the [`Pickle`]'s side buffers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PickleValue {
    None,
    Bool(bool),
    Int(i64),
    /// An int that needs more than 64 bits but fits 128 (`LONG1`/`LONG4` of 9–16 bytes): an index
    /// into [`Pickle::big_ints`].
    BigInt(u32),
    /// An int wider than 128 bits, kept as its little-endian two's-complement bytes in
    /// [`Pickle::data`].
    HugeInt(Span),
    Float(f64),
    /// UTF-8 text in [`Pickle::text`].
    Str(Span),
    /// Raw bytes in [`Pickle::data`].
    Bytes(Span),
    List(Seq),
    Tuple(Seq),
    /// Insertion-ordered pairs, as Python dicts are; a repeated key keeps its last value.
    Dict(Seq),
    /// `set` and `frozenset`.
    Set(Seq),
}

/// A decoded pickle: the arena, its side buffers and the root value.
#[derive(Debug, Clone, Default)]
pub struct Pickle {
    pub nodes: Vec<PickleValue>,
    /// Every string's text, back to back.
    pub text: String,
    /// Every `bytes` value and huge int, back to back.
    pub data: Vec<u8>,
    pub big_ints: Vec<i128>,
    /// Container items (see [`Seq`]).
    pub items: Vec<NodeId>,
    /// One bit per node: fetched from the memo (or `DUP`ed), so it may be reached more than once.
    shared: Vec<u64>,
    pub root: NodeId,
}

impl Pickle {
    pub fn get(&self, id: NodeId) -> PickleValue {
        if id & INLINE_INT != 0 {
            return PickleValue::Int(i64::from(id & !INLINE_INT));
        }
        // Ids only come from this arena, so the index is always in range; `None` guards anyway.
        self.nodes
            .get(id as usize)
            .copied()
            .unwrap_or(PickleValue::None)
    }

    /// Whether `id` may be reached more than once (memo fetches): worth caching by id.
    pub fn is_shared(&self, id: NodeId) -> bool {
        self.shared
            .get(id as usize / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    fn seq(&self, s: Seq) -> &[NodeId] {
        self.items.get(s.range()).unwrap_or(&[])
    }

    /// A dict's keys and values interleaved (`[k0, v0, k1, v1, …]`; empty for anything else), for
    /// callers that read every key in one pass.
    pub fn dict_items(&self, id: NodeId) -> &[NodeId] {
        match self.get(id) {
            PickleValue::Dict(s) => self.seq(s),
            _ => &[],
        }
    }

    pub fn is_dict(&self, id: NodeId) -> bool {
        matches!(self.get(id), PickleValue::Dict(_))
    }

    /// The value under a string key of a dict, if `id` is a dict holding it.
    pub fn dict_get(&self, id: NodeId, key: &str) -> Option<NodeId> {
        self.dict_items(id)
            .chunks_exact(2)
            .rev()
            .find(|kv| self.as_str(kv[0]) == Some(key))
            .map(|kv| kv[1])
    }

    pub fn as_str(&self, id: NodeId) -> Option<&str> {
        match self.get(id) {
            PickleValue::Str(s) => self
                .text
                .get(s.start as usize..s.start as usize + s.len as usize),
            _ => None,
        }
    }

    fn data_of(&self, s: Span) -> &[u8] {
        self.data
            .get(s.start as usize..s.start as usize + s.len as usize)
            .unwrap_or(&[])
    }

    /// An integer (or bool) that fits `i128`.
    pub fn as_i128(&self, id: NodeId) -> Option<i128> {
        match self.get(id) {
            PickleValue::Int(i) => Some(i128::from(i)),
            PickleValue::BigInt(k) => self.big_ints.get(k as usize).copied(),
            PickleValue::Bool(b) => Some(i128::from(b)),
            _ => None,
        }
    }

    pub fn as_i64(&self, id: NodeId) -> Option<i64> {
        match self.get(id) {
            PickleValue::Int(i) => Some(i),
            _ => self.as_i128(id).and_then(|v| i64::try_from(v).ok()),
        }
    }

    pub fn as_u64(&self, id: NodeId) -> Option<u64> {
        match self.get(id) {
            PickleValue::Int(i) => u64::try_from(i).ok(),
            _ => self.as_i128(id).and_then(|v| u64::try_from(v).ok()),
        }
    }

    pub fn as_f64(&self, id: NodeId) -> Option<f64> {
        match self.get(id) {
            PickleValue::Float(f) => Some(f),
            PickleValue::Int(i) => Some(i as f64),
            _ => None,
        }
    }

    pub fn as_bool(&self, id: NodeId) -> Option<bool> {
        match self.get(id) {
            PickleValue::Bool(b) => Some(b),
            PickleValue::Int(i) => Some(i != 0),
            _ => None,
        }
    }

    /// The items of a list, tuple or set (empty for anything else).
    pub fn items(&self, id: NodeId) -> &[NodeId] {
        match self.get(id) {
            PickleValue::List(s) | PickleValue::Tuple(s) | PickleValue::Set(s) => self.seq(s),
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
            PickleValue::Bool(b) => Value::Bool(b),
            PickleValue::Int(i) => Value::from(i),
            PickleValue::BigInt(_) => match self.as_i128(id).map(u64::try_from) {
                Some(Ok(u)) => Value::from(u),
                Some(Err(_)) => Value::String(self.as_i128(id).unwrap_or(0).to_string()),
                None => Value::Null,
            },
            PickleValue::HugeInt(_) => Value::String("<int wider than 128 bits>".into()),
            PickleValue::Float(f) => {
                serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
            }
            PickleValue::Str(_) => Value::String(self.as_str(id).unwrap_or("").to_owned()),
            PickleValue::Bytes(s) => {
                Value::String(String::from_utf8_lossy(self.data_of(s)).into_owned())
            }
            PickleValue::List(s) | PickleValue::Tuple(s) | PickleValue::Set(s) => Value::Array(
                self.seq(s)
                    .iter()
                    .map(|c| self.to_json_budget(*c, depth - 1, budget))
                    .collect(),
            ),
            PickleValue::Dict(s) => {
                let mut m = serde_json::Map::new();
                for kv in self.seq(s).chunks_exact(2) {
                    let key = match self.as_str(kv[0]) {
                        Some(t) => t.to_owned(),
                        None => self
                            .to_json_budget(kv[0], (depth - 1).min(2), budget)
                            .to_string(),
                    };
                    m.insert(key, self.to_json_budget(kv[1], depth - 1, budget));
                }
                Value::Object(m)
            }
        }
    }
}

/// Decodes a whole pickle. Errors carry the byte offset of the opcode that failed.
pub fn decode(bytes: &[u8]) -> Result<Pickle> {
    // Reserved once, because growing by doubling copies (and in wasm keeps the old copies' memory):
    // the 50 MB benchmark snapshot of fresh frame dicts has one arena value per 16 input bytes and one
    // item slot per 2.5; real dumps, which share frames through the memo, fewer of both.
    // A reservation that fails (a huge input in wasm's 4 GiB) only means growing as we go.
    let mut p = Pickle::default();
    let _ = p.nodes.try_reserve((bytes.len() / 14).min(MAX_NODES));
    let _ = p.items.try_reserve((bytes.len() / 2).min(MAX_ITEMS));
    let mut memo = Vec::new();
    let _ = memo.try_reserve(bytes.len() / 12); // Python memoizes every dict and list
    let m = Machine {
        b: bytes,
        i: 0,
        p,
        stack: Vec::new(),
        marks: Vec::new(),
        memo,
        values: 0,
    };
    m.run()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::codes::{decode_long, Long};
    use super::*;
    use crate::error::ErrorKind;

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

    /// Two lists filled in turn: neither span stays at the end of the item buffer, so each append
    /// relocates or fills slack; the contents must still come out whole and in order.
    #[test]
    fn interleaved_appends_keep_each_list_in_order() {
        let mut b = b"\x80\x04]\x940]\x940".to_vec();
        for k in 0..40u8 {
            b.extend_from_slice(&[b'h', 0, b'K', k, b'a', b'0']);
            b.extend_from_slice(&[b'h', 1, b'K', 100 + k, b'a', b'0']);
        }
        b.extend_from_slice(b"h\x00h\x01\x86.");
        let v = decode(&b).unwrap();
        let ab = v.items(v.root);
        let a: Vec<i64> = v.items(ab[0]).iter().filter_map(|&x| v.as_i64(x)).collect();
        let bb: Vec<i64> = v.items(ab[1]).iter().filter_map(|&x| v.as_i64(x)).collect();
        assert_eq!(a, (0..40).collect::<Vec<i64>>());
        assert_eq!(bb, (100..140).collect::<Vec<i64>>());
        assert!(v.is_shared(ab[0]) && v.is_shared(ab[1]));
    }

    #[test]
    fn ints_inline_and_in_the_arena_read_the_same() {
        // (5, 2**31 - 1, -1, 2**40) as a tuple: inline, arena (the unset marker), arena, arena.
        let p =
            b"\x80\x04(K\x05J\xff\xff\xff\x7fJ\xff\xff\xff\xff\x8a\x06\x00\x00\x00\x00\x00\x01t.";
        let v = decode(p).unwrap();
        let got: Vec<Option<i64>> = v.items(v.root).iter().map(|&x| v.as_i64(x)).collect();
        assert_eq!(got, [Some(5), Some((1 << 31) - 1), Some(-1), Some(1 << 40)]);
        assert_eq!(v.nodes.len(), 4, "the tuple and three arena ints");
    }

    #[test]
    fn longs_of_every_width() {
        assert_eq!(decode_long(&[]), Long::Small(0));
        assert_eq!(decode_long(&[0xff]), Long::Small(-1));
        assert_eq!(
            decode_long(&[0, 0, 0, 0, 0, 0, 0, 0x80, 0]),
            Long::Big(1 << 63)
        );
        assert_eq!(decode_long(&[1; 17]), Long::Huge);
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
