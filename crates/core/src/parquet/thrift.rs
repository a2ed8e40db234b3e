//! The Thrift compact protocol, read side, as far as Parquet's footer and page headers need it
//! (<https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md>).
//!
//! Parquet's metadata structs grow fields with every release (statistics, size statistics,
//! geospatial …), so the reader is generic: [`Reader::fields`] walks a struct's fields and every
//! field the caller does not ask for is skipped by its wire type. Nesting is capped so hostile
//! input cannot recurse without bound.

/// Wire types of the compact protocol.
pub const T_TRUE: u8 = 1;
pub const T_FALSE: u8 = 2;
pub const T_BYTE: u8 = 3;
pub const T_I16: u8 = 4;
pub const T_I32: u8 = 5;
pub const T_I64: u8 = 6;
pub const T_DOUBLE: u8 = 7;
pub const T_BINARY: u8 = 8;
pub const T_LIST: u8 = 9;
pub const T_SET: u8 = 10;
pub const T_MAP: u8 = 11;
pub const T_STRUCT: u8 = 12;

const MAX_DEPTH: u32 = 32;

/// A cursor over compact-protocol bytes. Errors are plain strings: the caller adds the file.
pub struct Reader<'a> {
    buf: &'a [u8],
    pub pos: usize,
    depth: u32,
}

type R<T> = Result<T, String>;

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            depth: 0,
        }
    }

    fn byte(&mut self) -> R<u8> {
        let b = *self.buf.get(self.pos).ok_or("thrift metadata ends early")?;
        self.pos += 1;
        Ok(b)
    }

    pub fn varint(&mut self) -> R<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("thrift varint longer than 64 bits".into())
    }

    pub fn zigzag(&mut self) -> R<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    pub fn i32(&mut self) -> R<i32> {
        i32::try_from(self.zigzag()?).map_err(|_| "thrift i32 out of range".into())
    }

    pub fn binary(&mut self) -> R<&'a [u8]> {
        let n = usize::try_from(self.varint()?).map_err(|_| "thrift length too large")?;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or("thrift string runs past the metadata")?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub fn string(&mut self) -> R<String> {
        let b = self.binary()?;
        std::str::from_utf8(b)
            .map(str::to_owned)
            .map_err(|_| "thrift string is not UTF-8".into())
    }

    /// A list header: (element type, length).
    pub fn list(&mut self) -> R<(u8, usize)> {
        let h = self.byte()?;
        let mut n = u64::from(h >> 4);
        if n == 15 {
            n = self.varint()?;
        }
        // Every element takes at least one byte: a longer list is corrupt, not big.
        let n = usize::try_from(n).map_err(|_| "thrift list too long")?;
        if n > self.buf.len() - self.pos.min(self.buf.len()) {
            return Err("thrift list longer than the metadata".into());
        }
        Ok((h & 0x0f, n))
    }

    /// Walks a struct: `on(reader, field id, wire type)` returns `Ok(true)` when it consumed the
    /// value, `Ok(false)` to have it skipped.
    pub fn fields(&mut self, mut on: impl FnMut(&mut Self, i16, u8) -> R<bool>) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("thrift metadata nested too deep".into());
        }
        let mut id: i16 = 0;
        loop {
            let h = self.byte()?;
            let ty = h & 0x0f;
            if ty == 0 {
                break;
            }
            let delta = h >> 4;
            id = if delta == 0 {
                i16::try_from(self.zigzag()?).map_err(|_| "thrift field id out of range")?
            } else {
                id.wrapping_add(i16::from(delta))
            };
            if !on(self, id, ty)? {
                self.skip(ty)?;
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// Skips one value of wire type `ty` (in a struct field; booleans carry their value in the
    /// type there).
    pub fn skip(&mut self, ty: u8) -> R<()> {
        match ty {
            T_TRUE | T_FALSE => Ok(()),
            _ => self.skip_value(ty, false),
        }
    }

    fn skip_value(&mut self, ty: u8, in_list: bool) -> R<()> {
        match ty {
            T_TRUE | T_FALSE => {
                if in_list {
                    self.byte()?;
                }
            }
            T_BYTE => {
                self.byte()?;
            }
            T_I16 | T_I32 | T_I64 => {
                self.varint()?;
            }
            T_DOUBLE => {
                let end = self.pos.checked_add(8).filter(|&e| e <= self.buf.len());
                self.pos = end.ok_or("thrift double runs past the metadata")?;
            }
            T_BINARY => {
                self.binary()?;
            }
            T_LIST | T_SET => {
                let (et, n) = self.list()?;
                self.nested(|r| (0..n).try_for_each(|_| r.skip_value(et, true)))?;
            }
            T_MAP => {
                let n = self.varint()?;
                if n > 0 {
                    let kv = self.byte()?;
                    let n = usize::try_from(n).map_err(|_| "thrift map too long")?;
                    self.nested(|r| {
                        (0..n).try_for_each(|_| {
                            r.skip_value(kv >> 4, true)?;
                            r.skip_value(kv & 0x0f, true)
                        })
                    })?;
                }
            }
            T_STRUCT => self.fields(|_, _, _| Ok(false))?,
            _ => return Err(format!("unknown thrift wire type {ty}")),
        }
        Ok(())
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self) -> R<()>) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("thrift metadata nested too deep".into());
        }
        f(self)?;
        self.depth -= 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_and_skips_unknown_ones() {
        // struct { 1: i32 = -3, 2: string "ab", 5: list<i64> [1, 2], 6: struct { 1: true } }
        let bytes = [
            0x15, 0x05, // field 1, i32, zigzag(-3) = 5
            0x18, 0x02, b'a', b'b', // field 2, binary
            0x39, 0x26, 0x02, 0x04, // field 5 (delta 3), list of 2 i64
            0x1c, 0x11, 0x00, // field 6, struct { field 1 true }, stop
            0x00,
        ];
        let mut r = Reader::new(&bytes);
        let (mut a, mut b) = (0, String::new());
        r.fields(|r, id, _| {
            Ok(match id {
                1 => {
                    a = r.i32()?;
                    true
                }
                2 => {
                    b = r.string()?;
                    true
                }
                _ => false,
            })
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((a, b.as_str(), r.pos), (-3, "ab", bytes.len()));
    }

    #[test]
    fn truncated_and_deep_input_is_an_error_not_a_panic() {
        let mut r = Reader::new(&[0x15]);
        assert!(r.fields(|_, _, _| Ok(false)).is_err());
        let deep = vec![0x1c; 200];
        assert!(Reader::new(&deep).fields(|_, _, _| Ok(false)).is_err());
    }
}
