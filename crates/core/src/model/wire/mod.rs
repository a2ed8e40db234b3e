//! A model as bytes, to move it between wasm instances (the page's reader workers and the page):
//! a list of sections, each a column or a small table, so the receiver can take them one at a time
//! (the page decodes one per task and never holds the whole encoding in its memory).
//!
//! Little-endian fixed-width values, lengths as `u32`; nothing is shared with another version of
//! the code (both ends are the same build), so there is no version field. Every read is checked:
//! bytes that end early or hold an impossible value are an [`ErrorKind::Syntax`] error, never a
//! panic.

mod check;
mod tables;
mod trace;

pub use check::Checked;
pub use trace::{column_piece, encode, pieces, read_piece, section, section_count, Decoder, PIECE};

use super::strings::StrId;
use super::trace::{IdVal, SliceKind, TrackKind};
use crate::error::{Error, ErrorKind, Result};

/// Why a section could not be read.
pub fn bad(what: &str) -> Error {
    Error::new(
        ErrorKind::Syntax(format!("model data from a reader worker: {what}")),
        0,
    )
}

/// Reads values back from one section.
pub struct Get<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Get<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Get { b, i: 0 }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.i.checked_add(n).ok_or_else(|| bad("length"))?;
        let s = self.b.get(self.i..end).ok_or_else(|| bad("cut short"))?;
        self.i = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub fn count(&mut self) -> Result<usize> {
        let n = u32::get(self)? as usize;
        // Every element takes at least one byte: a larger count is corrupt, not a huge allocation.
        if n > self.b.len() - self.i {
            return Err(bad("a count larger than its data"));
        }
        Ok(n)
    }

    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.count()?;
        self.take(n)
    }

    pub fn str(&mut self) -> Result<&'a str> {
        std::str::from_utf8(self.bytes()?).map_err(|_| bad("text that is not UTF-8"))
    }

    pub fn string(&mut self) -> Result<String> {
        self.str().map(str::to_owned)
    }

    pub fn done(&self) -> Result<()> {
        if self.i == self.b.len() {
            Ok(())
        } else {
            Err(bad("trailing bytes"))
        }
    }
}

/// A value with a fixed encoding.
pub trait Wire: Sized {
    fn put(&self, out: &mut Vec<u8>);
    fn get(g: &mut Get<'_>) -> Result<Self>;

    /// Appends every value of `v` to `out`. Fixed-width numbers are written into bytes grown
    /// once: value by value, each `extend_from_slice` checked the capacity again and the loop did
    /// not vectorize (a 50 MB snapshot's model, 18.6 MB of sections, took ~10 ms to encode).
    fn put_many(v: &[Self], out: &mut Vec<u8>) {
        v.iter().for_each(|x| x.put(out));
    }

    /// Appends `n` values read from `g` to `out`. Fixed-width numbers take their bytes in one
    /// bounds check and convert them in a loop the compiler can vectorize: value by value, the
    /// page spent ~15 ms of a 50 MB snapshot's load (and more of a big trace's) checking bounds.
    fn get_many(g: &mut Get<'_>, n: usize, out: &mut Vec<Self>) -> Result<()> {
        out.reserve(n);
        for _ in 0..n {
            out.push(Self::get(g)?);
        }
        Ok(())
    }
}

/// The `n` fixed-width values of `W` bytes each at `g`, as byte arrays.
fn fixed<'a, const W: usize>(
    g: &mut Get<'a>,
    n: usize,
) -> Result<impl Iterator<Item = [u8; W]> + 'a> {
    let b = g.take(n.checked_mul(W).ok_or_else(|| bad("length"))?)?;
    Ok(b.chunks_exact(W).map(|c| {
        let mut a = [0u8; W];
        a.copy_from_slice(c);
        a
    }))
}

macro_rules! wire_num {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(g: &mut Get<'_>) -> Result<Self> {
                g.array().map(<$t>::from_le_bytes)
            }
            fn put_many(v: &[Self], out: &mut Vec<u8>) {
                const W: usize = std::mem::size_of::<$t>();
                let at = out.len();
                out.resize(at + v.len() * W, 0);
                if let Some(dst) = out.get_mut(at..) {
                    for (d, x) in dst.chunks_exact_mut(W).zip(v) {
                        d.copy_from_slice(&x.to_le_bytes());
                    }
                }
            }
            fn get_many(g: &mut Get<'_>, n: usize, out: &mut Vec<Self>) -> Result<()> {
                let values = fixed::<{ std::mem::size_of::<$t>() }>(g, n)?;
                out.extend(values.map(<$t>::from_le_bytes));
                Ok(())
            }
        }
    )*};
}
wire_num!(u8, u16, i16, u32, i32, u64, i64, f32, f64);

impl Wire for bool {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(u8::get(g)? != 0)
    }
}

impl Wire for StrId {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        u32::get(g).map(StrId)
    }
    fn put_many(v: &[Self], out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + v.len() * 4, 0);
        if let Some(dst) = out.get_mut(at..) {
            for (d, x) in dst.chunks_exact_mut(4).zip(v) {
                d.copy_from_slice(&x.0.to_le_bytes());
            }
        }
    }
    fn get_many(g: &mut Get<'_>, n: usize, out: &mut Vec<Self>) -> Result<()> {
        out.extend(fixed::<4>(g, n)?.map(|b| StrId(u32::from_le_bytes(b))));
        Ok(())
    }
}

impl<T: Wire> Wire for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                v.put(out);
            }
        }
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        match u8::get(g)? {
            0 => Ok(None),
            1 => T::get(g).map(Some),
            _ => Err(bad("an option tag")),
        }
    }
}

impl<A: Wire, B: Wire> Wire for (A, B) {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
        self.1.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok((A::get(g)?, B::get(g)?))
    }
}

impl Wire for [u32; 3] {
    fn put(&self, out: &mut Vec<u8>) {
        self.iter().for_each(|v| v.put(out));
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok([u32::get(g)?, u32::get(g)?, u32::get(g)?])
    }
    fn get_many(g: &mut Get<'_>, n: usize, out: &mut Vec<Self>) -> Result<()> {
        out.extend(fixed::<12>(g, n)?.map(|b| {
            let w = |k: usize| u32::from_le_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]);
            [w(0), w(4), w(8)]
        }));
        Ok(())
    }
}

impl Wire for String {
    fn put(&self, out: &mut Vec<u8>) {
        put_bytes(out, self.as_bytes());
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        g.string()
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) {
        (self.len() as u32).put(out);
        self.iter().for_each(|v| v.put(out));
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        let n = g.count()?;
        let mut v = Vec::new();
        T::get_many(g, n, &mut v)?;
        Ok(v)
    }
}

impl Wire for IdVal {
    fn put(&self, out: &mut Vec<u8>) {
        match *self {
            IdVal::Int(v) => {
                out.push(0);
                v.put(out);
            }
            IdVal::Str(s) => {
                out.push(1);
                s.put(out);
            }
        }
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        match u8::get(g)? {
            0 => i64::get(g).map(IdVal::Int),
            1 => StrId::get(g).map(IdVal::Str),
            _ => Err(bad("an id tag")),
        }
    }
}

/// Every slice kind, in declaration order (the wire writes the index).
const KINDS: [SliceKind; 10] = [
    SliceKind::CpuOp,
    SliceKind::UserAnnotation,
    SliceKind::PythonFunction,
    SliceKind::Runtime,
    SliceKind::Driver,
    SliceKind::Kernel,
    SliceKind::Memcpy,
    SliceKind::Memset,
    SliceKind::GpuAnnotation,
    SliceKind::Other,
];

impl Wire for SliceKind {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        KINDS
            .get(u8::get(g)? as usize)
            .copied()
            .ok_or_else(|| bad("a slice kind"))
    }
}

impl Wire for TrackKind {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self == TrackKind::Gpu));
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(if bool::get(g)? {
            TrackKind::Gpu
        } else {
            TrackKind::Cpu
        })
    }
}

pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    (b.len() as u32).put(out);
    out.extend_from_slice(b);
}

impl Wire for Error {
    fn put(&self, out: &mut Vec<u8>) {
        let (tag, text) = match &self.kind {
            ErrorKind::Incompatible(s) => (0u8, s.as_str()),
            ErrorKind::Truncated => (1, ""),
            ErrorKind::Syntax(s) => (2, s.as_str()),
            ErrorKind::Refused(s) => (3, s.as_str()),
            ErrorKind::Limit(s) => (4, s.as_str()),
            ErrorKind::Compression(s) => (5, s.as_str()),
            ErrorKind::Cancelled => (6, ""),
            ErrorKind::Io(s) => (7, s.as_str()),
        };
        tag.put(out);
        put_bytes(out, text.as_bytes());
        self.offset.put(out);
        self.file.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        let tag = u8::get(g)?;
        let text = g.string()?;
        let kind = match tag {
            0 => ErrorKind::Incompatible(text),
            1 => ErrorKind::Truncated,
            2 => ErrorKind::Syntax(text),
            3 => ErrorKind::Refused(text),
            4 => ErrorKind::Limit(text),
            5 => ErrorKind::Compression(text),
            6 => ErrorKind::Cancelled,
            7 => ErrorKind::Io(text),
            _ => return Err(bad("an error kind")),
        };
        let offset = u64::get(g)?;
        let file = Option::<String>::get(g)?;
        Ok(Error { file, offset, kind })
    }
}
