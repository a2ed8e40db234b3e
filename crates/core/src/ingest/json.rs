//! A resumable JSON scanner over a byte window.
//!
//! The Kineto reader sees the file as a series of fixed-size slices, never the whole text. Each
//! function here either finishes a token inside the window or reports [`Stop::Incomplete`], after
//! which the caller rewinds to the start of the event, waits for the next slice, and tries again.
//! Nothing recurses on input depth, so hostile nesting cannot overflow the stack.

use super::stops;
use memchr::memchr2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The window ends before the token does.
    Incomplete,
    /// The bytes cannot be JSON here; the message says what was expected.
    Syntax(&'static str),
}

pub(crate) type Scan<T> = Result<T, Stop>;

/// A raw JSON string: the bytes between the quotes, and whether they contain escapes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawStr<'a> {
    pub bytes: &'a [u8],
    pub escaped: bool,
}

impl<'a> RawStr<'a> {
    /// [`RawStr::decode`], and whether bytes that are not UTF-8 were replaced by U+FFFD.
    pub fn decode_checked<'s>(&self, scratch: &'s mut String) -> (&'s str, bool)
    where
        'a: 's,
    {
        if !self.escaped {
            return match std::str::from_utf8(self.bytes) {
                Ok(s) => (s, false),
                Err(_) => {
                    *scratch = String::from_utf8_lossy(self.bytes).into_owned();
                    (scratch, true)
                }
            };
        }
        scratch.clear();
        let lossy = unescape_into(self.bytes, scratch);
        (scratch, lossy)
    }

    /// Decodes into `scratch` when escapes are present; borrows otherwise.
    pub fn decode<'s>(&self, scratch: &'s mut String) -> &'s str
    where
        'a: 's,
    {
        self.decode_checked(scratch).0
    }
}

/// JSON string unescaping, lenient: bad escapes are kept literally rather than failing the event.
/// Returns whether bytes that are not UTF-8 had to be replaced.
pub(crate) fn unescape_into(b: &[u8], out: &mut String) -> bool {
    let mut bytes: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c != b'\\' || i + 1 >= b.len() {
            bytes.push(c);
            i += 1;
            continue;
        }
        let e = b[i + 1];
        i += 2;
        match e {
            b'"' => bytes.push(b'"'),
            b'\\' => bytes.push(b'\\'),
            b'/' => bytes.push(b'/'),
            b'b' => bytes.push(8),
            b'f' => bytes.push(12),
            b'n' => bytes.push(b'\n'),
            b'r' => bytes.push(b'\r'),
            b't' => bytes.push(b'\t'),
            b'u' => {
                let hex = |s: &[u8]| -> Option<u32> {
                    let t = std::str::from_utf8(s).ok()?;
                    u32::from_str_radix(t, 16).ok()
                };
                let Some(hi) = b.get(i..i + 4).and_then(hex) else {
                    bytes.extend_from_slice(b"\\u");
                    continue;
                };
                i += 4;
                let mut cp = hi;
                if (0xD800..0xDC00).contains(&hi) && b.get(i..i + 2) == Some(b"\\u") {
                    if let Some(lo) = b.get(i + 2..i + 6).and_then(hex) {
                        if (0xDC00..0xE000).contains(&lo) {
                            cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            i += 6;
                        }
                    }
                }
                let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                let mut tmp = [0u8; 4];
                bytes.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
            }
            other => {
                bytes.push(b'\\');
                bytes.push(other);
            }
        }
    }
    match String::from_utf8(bytes) {
        Ok(s) => {
            out.push_str(&s);
            false
        }
        Err(e) => {
            out.push_str(&String::from_utf8_lossy(e.as_bytes()));
            true
        }
    }
}

/// The bytes a number's text is read over: one table load a byte instead of five compares.
static NUMBER_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = matches!(c as u8, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E');
        c += 1;
    }
    t
};

pub(crate) struct Cursor<'a> {
    pub b: &'a [u8],
    pub i: usize,
}

#[inline]
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

impl<'a> Cursor<'a> {
    pub fn new(b: &'a [u8], i: usize) -> Self {
        Cursor { b, i }
    }

    #[inline]
    pub fn ws(&mut self) {
        while self.i < self.b.len() && is_ws(self.b[self.i]) {
            self.i += 1;
        }
    }

    /// The next non-whitespace byte, not consumed.
    #[inline]
    pub fn peek(&mut self) -> Scan<u8> {
        self.ws();
        self.b.get(self.i).copied().ok_or(Stop::Incomplete)
    }

    #[inline]
    pub fn expect(&mut self, c: u8, what: &'static str) -> Scan<()> {
        if self.peek()? == c {
            self.i += 1;
            Ok(())
        } else {
            Err(Stop::Syntax(what))
        }
    }

    /// A string value; the cursor must be on its opening quote (after whitespace).
    pub fn string(&mut self) -> Scan<RawStr<'a>> {
        if self.peek()? != b'"' {
            return Err(Stop::Syntax("expected a string"));
        }
        let start = self.i + 1;
        let b = self.b;
        let mut j = start;
        let mut escaped = false;
        // Sixteen bytes at a time, stopping only at a quote or a backslash.
        while j + 16 <= b.len() {
            let m = stops::string_stops(b, j);
            if m == 0 {
                j += 16;
                continue;
            }
            let at = j + m.trailing_zeros() as usize;
            if b.get(at) == Some(&b'"') {
                self.i = at + 1;
                return Ok(RawStr {
                    bytes: &b[start..at],
                    escaped,
                });
            }
            // A backslash: the byte after it is escaped, whatever it is.
            escaped = true;
            j = at + 2;
        }
        // The window's last bytes (fewer than sixteen).
        loop {
            let Some(k) = b.get(j..).and_then(|rest| memchr2(b'"', b'\\', rest)) else {
                return Err(Stop::Incomplete);
            };
            j += k;
            if b[j] == b'"' {
                self.i = j + 1;
                return Ok(RawStr {
                    bytes: &b[start..j],
                    escaped,
                });
            }
            escaped = true;
            j += 2;
        }
    }

    /// A number's text. A number that touches the window's end is incomplete: more digits may follow.
    pub fn number(&mut self) -> Scan<&'a [u8]> {
        self.ws();
        let start = self.i;
        let mut j = start;
        while self.b.get(j).is_some_and(|&c| NUMBER_BYTE[usize::from(c)]) {
            j += 1;
        }
        if j == self.b.len() {
            return Err(Stop::Incomplete);
        }
        if j == start {
            return Err(Stop::Syntax("expected a number"));
        }
        self.i = j;
        Ok(&self.b[start..j])
    }

    /// Skips one value of any type and returns its raw bytes.
    pub fn value(&mut self) -> Scan<&'a [u8]> {
        let c = self.peek()?;
        let start = self.i;
        match c {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => self.skip_container()?,
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'-' | b'0'..=b'9' => {
                self.number()?;
            }
            // Non-standard but seen in the wild from Python's json module.
            b'N' => self.literal(b"NaN")?,
            b'I' => self.literal(b"Infinity")?,
            _ => return Err(Stop::Syntax("expected a value")),
        }
        Ok(&self.b[start..self.i])
    }

    fn literal(&mut self, lit: &'static [u8]) -> Scan<()> {
        let end = self.i + lit.len();
        if end > self.b.len() {
            return if lit.starts_with(&self.b[self.i..]) {
                Err(Stop::Incomplete)
            } else {
                Err(Stop::Syntax("bad literal"))
            };
        }
        if &self.b[self.i..end] != lit {
            return Err(Stop::Syntax("bad literal"));
        }
        self.i = end;
        Ok(())
    }

    /// Skips a balanced object or array, iteratively. Only brackets and strings matter here; the
    /// structure inside is validated when (and if) it is read.
    fn skip_container(&mut self) -> Scan<()> {
        let mut depth: usize = 0;
        let b = self.b;
        let mut j = self.i;
        loop {
            // Sixteen bytes at a time, visiting only the quotes and brackets.
            if j + 16 <= b.len() {
                let mut m = stops::container_stops(b, j);
                let mut next = j + 16;
                while m != 0 {
                    let at = j + m.trailing_zeros() as usize;
                    m &= m - 1;
                    match b.get(at) {
                        Some(b'"') => {
                            self.i = at;
                            self.string()?;
                            next = self.i;
                            break;
                        }
                        Some(b'{' | b'[') => depth += 1,
                        _ => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                self.i = at + 1;
                                return Ok(());
                            }
                        }
                    }
                }
                j = next;
                continue;
            }
            // The window's last bytes, one at a time.
            let Some(&c) = b.get(j) else {
                return Err(Stop::Incomplete);
            };
            match c {
                b'"' => {
                    self.i = j;
                    self.string()?;
                    j = self.i;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.i = j + 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            j += 1;
        }
    }
}

/// Parses an integer that may exceed `i64` (Kineto writes u64 ids): values above `i64::MAX` wrap
/// to their two's-complement `i64`, which keeps them distinct and comparable for linking.
/// The fast path inlines at its callers (a reader parses several ids an event: it was ~5 % of a
/// reader worker's time in V8 as a call); anything else goes to [`parse_int_other`].
#[inline]
pub(crate) fn parse_int(text: &[u8]) -> Option<i64> {
    // Fast path: plain decimal digits that fit in a u64.
    let (neg, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        _ => (false, text),
    };
    if !digits.is_empty() && digits.len() <= 19 {
        let mut v = 0u64;
        let mut ok = true;
        for &d in digits {
            let x = d.wrapping_sub(b'0');
            ok &= x < 10;
            v = v.wrapping_mul(10).wrapping_add(u64::from(x));
        }
        if ok {
            return Some(if neg {
                (v as i64).wrapping_neg()
            } else {
                v as i64
            });
        }
    }
    parse_int_other(text)
}

/// [`parse_int`] of what is not 1 to 19 plain digits (with a `-`).
#[inline(never)]
fn parse_int_other(text: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(text).ok()?;
    if let Ok(v) = s.parse::<i64>() {
        return Some(v);
    }
    if let Ok(v) = s.parse::<u64>() {
        return Some(v as i64);
    }
    let f: f64 = s.parse().ok()?;
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.2e18 {
        Some(f as i64)
    } else {
        None
    }
}

pub(crate) fn parse_f64(text: &[u8]) -> Option<f64> {
    std::str::from_utf8(text)
        .ok()?
        .trim_matches('"')
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_tokens_ask_for_more_bytes() {
        assert_eq!(
            Cursor::new(b"\"abc", 0).string().map(|_| ()),
            Err(Stop::Incomplete)
        );
        assert_eq!(
            Cursor::new(b"123", 0).number().map(|_| ()),
            Err(Stop::Incomplete)
        );
        assert_eq!(
            Cursor::new(b"{\"a\": [1, 2", 0).value().map(|_| ()),
            Err(Stop::Incomplete)
        );
        assert_eq!(
            Cursor::new(b"tr", 0).value().map(|_| ()),
            Err(Stop::Incomplete)
        );
        assert_eq!(
            Cursor::new(b"tx", 0).value().map(|_| ()),
            Err(Stop::Syntax("bad literal"))
        );
    }

    #[test]
    fn strings_with_escaped_quotes_and_brackets_inside_containers_are_skipped_whole() {
        let text = br#"{"a": "x\"}]", "b": [[1], {"c": "\\"}]} rest"#;
        let mut c = Cursor::new(text, 0);
        let v = c.value().map(|v| v.len());
        assert_eq!(v, Ok(text.len() - 5));
    }

    /// Strings and containers read sixteen bytes at a time end where a byte-by-byte reading ends,
    /// whatever their offset from the window's start (each stop falls in every lane of a block
    /// and in the byte-by-byte tail), and ask for more bytes when the window cuts them.
    #[test]
    fn values_end_at_the_same_byte_at_every_offset_and_every_cut() {
        let long = "k".repeat(40);
        let values: Vec<String> = vec![
            format!(r#""{long}""#),
            format!(r#""{long}\"{long}\\""#),
            r#""\\\\\\\"\"""#.to_string(),
            format!(r#""a\"}}]{long}\\""#),
            format!(r#"[[8, 2048, 4096], [], "{long}"]"#),
            format!(r#"{{"a": "x\"}}]", "b": [[1], {{"c": "\\"}}], "{long}": ["]", "\"["]}}"#),
            format!(r#"["{{", [[[["{long}"]]]], {{"[": "}}"}}, "\\\\"]"#),
        ];
        for v in &values {
            // `v` then bytes a scan must not run into.
            for pad in 0..20 {
                let text = format!("{}{v} ]}}\"x", " ".repeat(pad));
                let b = text.as_bytes();
                let end = pad + v.len();
                let mut c = Cursor::new(b, pad);
                assert_eq!(c.value(), Ok(v.as_bytes()), "{v} after {pad}");
                assert_eq!(c.i, end);
                for cut in pad + 1..end {
                    assert_eq!(
                        Cursor::new(&b[..cut], pad).value(),
                        Err(Stop::Incomplete),
                        "{v} after {pad}, cut at {cut}"
                    );
                }
            }
        }
    }

    #[test]
    fn unescape_handles_surrogate_pairs_and_keeps_bad_escapes() {
        let mut s = String::new();
        let _ = unescape_into(br#"a\"b\u00e9\ud83d\ude00\q"#, &mut s);
        assert_eq!(s, "a\"bé😀\\q");
    }

    #[test]
    fn u64_ids_above_i64_max_stay_distinct() {
        assert_eq!(
            parse_int(b"10159970886766084423"),
            Some(10159970886766084423u64 as i64)
        );
        assert_eq!(parse_int(b"-5"), Some(-5));
        assert_eq!(parse_int(b"7.0"), Some(7));
    }
}
