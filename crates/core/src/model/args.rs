//! Every kept `args` object as compact JSON text, in fixed-size blocks.
//!
//! One growing `Vec<u8>` would double past the text's size and copy itself on each growth — on a
//! 1 GB trace that transient alone exceeds the memory budget (wasm linear memory never shrinks).
//! Blocks never move; the slack is at most one block.
//!
//! Keys are stored once: a record holds [`KEY`] and a two-byte index into the key table where the
//! text had `"key":`. Keys were 60 % of the stored text of a real H100 trace (`"Python parent id"`,
//! `"Input Strides"`, `"Ev Idx"` on every event): 17 MB of args text became 7 MB. A literal KEY
//! byte in a key or value (only malformed JSON has one) is written as `\u0001`.
//!
//! A record may instead say where the whole args object lies in the file ([`FILE`] right after
//! its `{`): the page's reader workers keep only the keys an analysis reads and leave the rest,
//! shown only in the details panel, in the file, which the panel reads again (issue 30: a trace
//! with Python call stacks in its args kept 13 MB of them for a 35 MB file).

use rustc_hash::FxHashMap;
use std::borrow::Cow;

mod copier;
pub use copier::RecordCopier;

/// Bytes per block: the slack of the last one is wasm memory too.
const BLOCK: usize = 1 << 20;

/// Marks a key reference in a record: this byte, then the key's index as u16 little-endian.
const KEY: u8 = 0x01;

/// Right after a record's `{`: this byte, then the args object's offset in the file (16 hex
/// digits) and length (8): hex, so the bytes after the marker never hold a [`KEY`]. Only ever at
/// that place, so a literal byte of this value elsewhere (malformed input) is read as text.
const FILE: u8 = 0x02;

/// Bytes of a [`FILE`] mark.
pub(crate) const FILE_MARK: usize = 1 + 16 + 8;

#[derive(Debug, Clone, Default)]
pub struct ArgsArena {
    /// (global offset of the block's first byte, bytes).
    blocks: Vec<(u32, Vec<u8>)>,
    len: u32,
    keys: Vec<Box<[u8]>>,
    key_ids: FxHashMap<Box<[u8]>, u16>,
    /// Key ids of the record being written (kept to avoid an allocation per record).
    scratch: Vec<Option<u16>>,
}

/// The [`FILE`] mark of a record (the marker byte and its hex digits), if it has one.
fn file_mark(b: &[u8]) -> Option<&[u8]> {
    let mark = b.get(1..1 + FILE_MARK)?;
    (b[0] == b'{' && mark[0] == FILE && mark[1..].iter().all(u8::is_ascii_hexdigit)).then_some(mark)
}

/// `v`'s low `digits` hex digits, most significant first, in lower case (as `{:0Nx}` writes them:
/// the file mark is written for every slice whose args stay in the file, so not through `fmt`).
fn put_hex(out: &mut Vec<u8>, v: u64, digits: u32) {
    out.extend(
        (0..digits)
            .rev()
            .map(|i| b"0123456789abcdef"[(v >> (4 * i)) as usize & 15]),
    );
}

/// Copies `b`, writing any literal [`KEY`] byte as the JSON escape for it.
fn put(out: &mut Vec<u8>, b: &[u8]) {
    if memchr::memchr(KEY, b).is_none() {
        out.extend_from_slice(b);
    } else {
        for &c in b {
            if c == KEY {
                out.extend_from_slice(b"\\u0001");
            } else {
                out.push(c);
            }
        }
    }
}

impl ArgsArena {
    /// Total bytes stored.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one record written by `write`; returns its (offset, length), or `(0, 0)` once 4 GiB
    /// of args text is stored (the details panel then shows no args; analyses never need them).
    pub fn push(&mut self, size_hint: usize, write: impl FnOnce(&mut Vec<u8>)) -> (u32, u32) {
        if self.len as usize + size_hint.max(1) * 2 >= u32::MAX as usize {
            return (0, 0);
        }
        let need_new = match self.blocks.last() {
            Some((_, b)) => b.len() + size_hint > b.capacity(),
            None => true,
        };
        if need_new {
            let cap = BLOCK.max(size_hint.next_power_of_two());
            self.blocks.push((self.len, Vec::with_capacity(cap)));
        }
        let Some((start, b)) = self.blocks.last_mut() else {
            return (0, 0);
        };
        let before = b.len();
        write(b);
        let off = *start as usize + before;
        let n = b.len() - before;
        if off + n > u32::MAX as usize {
            b.truncate(before);
            return (0, 0);
        }
        self.len = (off + n) as u32;
        (off as u32, n as u32)
    }

    /// Index of `key` in the key table, added if new; `None` once the table is full.
    fn key_id(&mut self, key: &[u8]) -> Option<u16> {
        if let Some(&id) = self.key_ids.get(key) {
            return Some(id);
        }
        let id = u16::try_from(self.keys.len()).ok()?;
        self.keys.push(key.into());
        self.key_ids.insert(key.into(), id);
        Some(id)
    }

    /// Appends one args object, `{"k":v,...}`, from its key and value texts as written (values
    /// are copied verbatim); keys go through the key table.
    pub fn push_object<'a, I>(&mut self, size_hint: usize, pairs: I) -> (u32, u32)
    where
        I: Iterator<Item = (&'a [u8], &'a [u8])> + Clone,
    {
        self.push_object_from(size_hint, pairs, None)
    }

    /// [`ArgsArena::push_object`] of the pairs kept, with where the whole object lies in the file
    /// (`(offset, length)`) when some of its keys were left there.
    pub fn push_object_from<'a, I>(
        &mut self,
        size_hint: usize,
        pairs: I,
        file: Option<(u64, u32)>,
    ) -> (u32, u32)
    where
        I: Iterator<Item = (&'a [u8], &'a [u8])> + Clone,
    {
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        for (k, _) in pairs.clone() {
            let id = if memchr::memchr(KEY, k).is_none() {
                self.key_id(k)
            } else {
                None
            };
            ids.push(id);
        }
        let hint = size_hint + if file.is_some() { FILE_MARK } else { 0 };
        let r = self.push(hint, |out| {
            out.push(b'{');
            if let Some((off, len)) = file {
                out.push(FILE);
                put_hex(out, off, 16);
                put_hex(out, u64::from(len), 8);
            }
            for (n, ((k, v), id)) in pairs.zip(&ids).enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                match id {
                    Some(id) => {
                        out.push(KEY);
                        out.extend_from_slice(&id.to_le_bytes());
                    }
                    None => {
                        out.push(b'"');
                        put(out, k);
                        out.extend_from_slice(b"\":");
                    }
                }
                put(out, v);
            }
            out.push(b'}');
        });
        self.scratch = ids;
        r
    }

    /// This arena's key id for each of `other`'s keys, in `other`'s order (the order they were
    /// first used there), adding those it lacks; `None` for keys past a full table.
    pub fn key_map(&mut self, other: &ArgsArena) -> Vec<Option<u16>> {
        other.keys.iter().map(|k| self.key_id(k)).collect()
    }

    /// Appends record `r` of `other`, its key references translated by `map` (from
    /// [`ArgsArena::key_map`]): the record `push_object` would have written here. Merging the
    /// sharded reader's arenas this way gives the one-thread reader's arena, offsets included.
    pub fn copy_record(
        &mut self,
        other: &ArgsArena,
        r: (u32, u32),
        map: &[Option<u16>],
    ) -> (u32, u32) {
        if r.1 == 0 {
            return (0, 0);
        }
        let Some(b) = other.get(r) else {
            return (0, 0);
        };
        self.push(b.len(), |out| {
            let mut i = 0;
            while let Some(k) = memchr::memchr(KEY, &b[i..]) {
                out.extend_from_slice(&b[i..i + k]);
                i += k;
                let Some(id) = b.get(i + 1..i + 3) else {
                    break;
                };
                let id = u16::from_le_bytes([id[0], id[1]]) as usize;
                match map.get(id).copied().flatten() {
                    Some(new) => {
                        out.push(KEY);
                        out.extend_from_slice(&new.to_le_bytes());
                    }
                    None => {
                        out.push(b'"');
                        put(out, other.keys.get(id).map_or(&[][..], |k| &k[..]));
                        out.extend_from_slice(b"\":");
                    }
                }
                i += 3;
            }
            out.extend_from_slice(&b[i..]);
        })
    }

    /// Where the record's whole args object lies in the file, `(offset, length)`, when the
    /// record holds only some of its keys (see the module doc).
    pub fn file_span(&self, r: (u32, u32)) -> Option<(u64, u32)> {
        let mark = file_mark(self.get(r)?)?;
        let hex = std::str::from_utf8(&mark[1..]).ok()?;
        let off = u64::from_str_radix(&hex[..16], 16).ok()?;
        let len = u32::from_str_radix(&hex[16..], 16).ok()?;
        Some((off, len))
    }

    /// The text of a record, keys written out again; `None` when the record is not UTF-8. Only
    /// the keys kept: [`ArgsArena::file_span`] says where the others are.
    pub fn text(&self, r: (u32, u32)) -> Option<Cow<'_, str>> {
        let whole = self.get(r)?;
        // A file mark is left out: `{` and what follows the mark.
        let (head, b) = match file_mark(whole) {
            Some(_) => (&whole[..1], &whole[1 + FILE_MARK..]),
            None => (&whole[..0], whole),
        };
        if memchr::memchr(KEY, b).is_none() && head.is_empty() {
            return std::str::from_utf8(b).ok().map(Cow::Borrowed);
        }
        let mut out = Vec::with_capacity(b.len() * 2 + 1);
        out.extend_from_slice(head);
        let mut i = 0;
        while i < b.len() {
            if b[i] == KEY && i + 2 < b.len() {
                let id = u16::from_le_bytes([b[i + 1], b[i + 2]]);
                if let Some(k) = self.keys.get(id as usize) {
                    out.push(b'"');
                    out.extend_from_slice(k);
                    out.extend_from_slice(b"\":");
                }
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        String::from_utf8(out).ok().map(Cow::Owned)
    }

    /// The value text of the top-level `key` in a record, as written (a string keeps its quotes
    /// and escapes), without writing the record out: the analyses that read one or two args of
    /// every op (sequence numbers, `CallFrom`) would otherwise allocate a string per op. Only
    /// scalar values are found (a number, a string, `true`…); `None` when the key is absent.
    pub fn value(&self, r: (u32, u32), key: &str) -> Option<&[u8]> {
        let &id = self.key_ids.get(key.as_bytes())?;
        let want = id.to_le_bytes();
        let b = self.get(r)?;
        let mut i = 0;
        while i < b.len() {
            if b[i] != KEY {
                i += 1;
                continue;
            }
            let found = b.get(i + 1..i + 3) == Some(&want[..]);
            i += 3;
            if !found {
                continue;
            }
            let rest = b.get(i..)?;
            let end = if rest.first() == Some(&b'"') {
                let mut k = 1;
                while k < rest.len() && rest[k] != b'"' {
                    k += if rest[k] == b'\\' { 2 } else { 1 };
                }
                (k + 1).min(rest.len())
            } else {
                rest.iter()
                    .position(|&c| matches!(c, b',' | b'}' | b']') || c == KEY)
                    .unwrap_or(rest.len())
            };
            return Some(&rest[..end]);
        }
        None
    }

    /// The integer value of the top-level `key` (see [`ArgsArena::value`]).
    pub fn int_value(&self, r: (u32, u32), key: &str) -> Option<i64> {
        std::str::from_utf8(self.value(r, key)?)
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The string value of the top-level `key` without its quotes; `None` for a non-string or one
    /// with escapes (file names and line numbers have none).
    pub fn str_value(&self, r: (u32, u32), key: &str) -> Option<&str> {
        let v = self.value(r, key)?;
        let inner = v.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
        if inner.contains(&b'\\') {
            return None;
        }
        std::str::from_utf8(inner).ok()
    }

    /// The bytes of a record returned by [`ArgsArena::push`].
    pub fn get(&self, (off, len): (u32, u32)) -> Option<&[u8]> {
        let k = self
            .blocks
            .partition_point(|(s, _)| *s <= off)
            .checked_sub(1)?;
        let (start, b) = &self.blocks[k];
        let a = (off - start) as usize;
        b.get(a..a + len as usize)
    }

    /// The key table, in id order (for `model/wire.rs`).
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        self.keys.iter().map(|k| &k[..])
    }

    /// The blocks: each one's offset and bytes (for `model/wire.rs`).
    pub fn blocks(&self) -> impl Iterator<Item = (u32, &[u8])> {
        self.blocks.iter().map(|(s, b)| (*s, &b[..]))
    }

    /// An arena from its key table and blocks as [`ArgsArena::keys`] and [`ArgsArena::blocks`]
    /// gave them; `None` when they do not fit together (keys repeated or too many, blocks not
    /// contiguous, past 4 GiB).
    pub fn from_parts(keys: Vec<Box<[u8]>>, blocks: Vec<(u32, Vec<u8>)>) -> Option<ArgsArena> {
        let mut a = ArgsArena::default();
        for k in &keys {
            if a.key_id(k)? as usize + 1 != a.keys.len() {
                return None;
            }
        }
        for (start, b) in blocks {
            if start != a.len {
                return None;
            }
            a.len = start.checked_add(u32::try_from(b.len()).ok()?)?;
            a.blocks.push((start, b));
        }
        Some(a)
    }

    pub fn heap_bytes(&self) -> usize {
        self.blocks.iter().map(|(_, b)| b.capacity()).sum::<usize>()
            + self.blocks.capacity() * 32
            + self.keys.iter().map(|k| 2 * k.len() + 40).sum::<usize>()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn hex_digits_are_those_fmt_writes() {
        for v in [
            0u64,
            1,
            0xa,
            0xdead_beef,
            u64::MAX,
            1 << 63,
            0x0123_4567_89ab_cdef,
        ] {
            let mut out = Vec::new();
            put_hex(&mut out, v, 16);
            put_hex(&mut out, v & 0xffff_ffff, 8);
            assert_eq!(out, format!("{v:016x}{:08x}", v & 0xffff_ffff).into_bytes());
        }
    }

    #[test]
    fn objects_round_trip_with_keys_stored_once() {
        let mut a = ArgsArena::default();
        let p1: [(&[u8], &[u8]); 2] = [(b"Python id", b"12"), (b"Ev Idx", b"897")];
        let p2: [(&[u8], &[u8]); 2] = [(b"Ev Idx", b"898"), (b"name", b"\"a\\u0001\"")];
        // A raw KEY byte (malformed input) in a value and in a key.
        let p3: [(&[u8], &[u8]); 1] = [(b"k\x01", b"\"\x01\"")];
        let r1 = a.push_object(40, p1.iter().copied());
        let r2 = a.push_object(40, p2.iter().copied());
        let r3 = a.push_object(40, p3.iter().copied());
        assert_eq!(a.text(r1).unwrap(), r#"{"Python id":12,"Ev Idx":897}"#);
        assert_eq!(a.text(r2).unwrap(), r#"{"Ev Idx":898,"name":"a\u0001"}"#);
        assert_eq!(a.text(r3).unwrap(), r#"{"k\u0001":"\u0001"}"#);
        // Two distinct keys stored; each later use costs 3 bytes.
        assert_eq!(a.keys.len(), 3);
        assert_eq!(a.int_value(r1, "Ev Idx"), Some(897));
        assert_eq!(a.int_value(r1, "Python id"), Some(12));
        assert_eq!(a.int_value(r2, "Python id"), None);
        assert_eq!(a.int_value(r2, "name"), None);
        assert_eq!(a.int_value(r2, "nope"), None);
        let p4: [(&[u8], &[u8]); 3] = [
            (b"CallFrom", b"\"model.py:12\""),
            (b"Python id", b"-3"),
            (b"s", b"\"a\\\"b\""),
        ];
        let r4 = a.push_object(60, p4.iter().copied());
        assert_eq!(a.str_value(r4, "CallFrom"), Some("model.py:12"));
        assert_eq!(a.int_value(r4, "Python id"), Some(-3));
        assert_eq!(a.value(r4, "s"), Some(&b"\"a\\\"b\""[..]));
        assert_eq!(a.str_value(r4, "s"), None);
        assert_eq!(r1.1 as usize, 1 + 3 + 2 + 1 + 3 + 3 + 1);
        for r in [r1, r2, r3] {
            let v: serde_json::Value = serde_json::from_str(&a.text(r).unwrap()).unwrap();
            assert!(v.is_object());
        }
    }

    #[test]
    fn a_record_with_args_left_in_the_file_says_where_and_shows_only_its_keys() {
        let mut a = ArgsArena::default();
        let kept: [(&[u8], &[u8]); 2] = [(b"Sequence number", b"17"), (b"CallFrom", b"\"m.py:3\"")];
        let r1 = a.push_object_from(40, kept.iter().copied(), Some((0x1_2345_6789, 513)));
        let r2 = a.push_object_from(40, std::iter::empty(), Some((7, 2)));
        let r3 = a.push_object(40, kept.iter().copied());
        assert_eq!(a.file_span(r1), Some((0x1_2345_6789, 513)));
        assert_eq!(a.file_span(r2), Some((7, 2)));
        assert_eq!(a.file_span(r3), None);
        assert_eq!(
            a.text(r1).unwrap(),
            r#"{"Sequence number":17,"CallFrom":"m.py:3"}"#
        );
        assert_eq!(a.text(r2).unwrap(), "{}");
        assert_eq!(a.int_value(r1, "Sequence number"), Some(17));
        assert_eq!(a.str_value(r1, "CallFrom"), Some("m.py:3"));
        assert_eq!(r1.1 as usize, r3.1 as usize + FILE_MARK);
        // Copied into another arena (a shard merged), with its keys numbered otherwise.
        let mut b = ArgsArena::default();
        b.push_object(10, [(&b"other"[..], &b"1"[..])].into_iter());
        let map = b.key_map(&a);
        let c1 = b.copy_record(&a, r1, &map);
        assert_eq!(b.file_span(c1), Some((0x1_2345_6789, 513)));
        assert_eq!(b.text(c1), a.text(r1));
        assert_eq!(b.int_value(c1, "Sequence number"), Some(17));
    }

    #[test]
    fn records_round_trip_across_block_boundaries() {
        let mut a = ArgsArena::default();
        let big = vec![b'x'; BLOCK - 10];
        let r1 = a.push(big.len(), |o| o.extend_from_slice(&big));
        let r2 = a.push(20, |o| o.extend_from_slice(b"{\"a\":1,\"b\":[1,2,3]}"));
        let huge = vec![b'y'; BLOCK * 2 + 5];
        let r3 = a.push(huge.len(), |o| o.extend_from_slice(&huge));
        assert_eq!(a.get(r1), Some(&big[..]));
        assert_eq!(a.get(r2), Some(&b"{\"a\":1,\"b\":[1,2,3]}"[..]));
        assert_eq!(a.get(r3), Some(&huge[..]));
        assert_eq!(a.len(), big.len() + 19 + huge.len());
    }
}
