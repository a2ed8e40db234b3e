//! Where to cut a Kineto stream into shards: just before an event, found from a few bytes.
//!
//! In valid JSON a raw newline is never inside a string, and libkineto starts every event on a
//! line of its own (`},\n  {`; its writer strips newlines from names). So a newline followed by
//! blanks and `{` is, in a Kineto file, the start of an event or of an object nested in one. A
//! re-serialized or minified trace has no newlines; there `}` `,` `{` (blanks allowed between)
//! is the likely boundary. Either may be wrong in a file built to fool it (or an object nested in
//! an event): the merge (`shard.rs`) checks every cut and reads the bytes again in order when one
//! was not a boundary, so these only need to be right most of the time.

use memchr::memrchr;

fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// The offset in `window` of the last likely event start at or after `from`, scanning back from
/// the end at most `limit` bytes: the position of the newline before it, else of the blank after
/// the comma before it (or of the `{` itself). `None` when there is none.
pub fn find_cut(window: &[u8], from: usize, limit: usize) -> Option<usize> {
    let lo = from.max(window.len().saturating_sub(limit));
    newline_cut(window, lo).or_else(|| brace_cut(window, lo))
}

/// `\n` blanks `{`: cut at the newline.
fn newline_cut(w: &[u8], lo: usize) -> Option<usize> {
    let mut end = w.len();
    while let Some(k) = memrchr(b'\n', &w[lo..end]) {
        let at = lo + k;
        let next = w[at + 1..].iter().position(|&c| !is_blank(c));
        if let Some(n) = next {
            if w[at + 1 + n] == b'{' && at > 0 {
                return Some(at);
            }
        }
        end = at;
    }
    None
}

/// `}` blanks `,` blanks `{`: cut right after the comma.
fn brace_cut(w: &[u8], lo: usize) -> Option<usize> {
    let mut end = w.len();
    while let Some(k) = memrchr(b'{', &w[lo..end]) {
        let at = lo + k;
        end = at;
        let before = &w[..at];
        let Some(comma) = before.iter().rposition(|&c| !is_blank(c)) else {
            continue;
        };
        if before[comma] != b',' {
            continue;
        }
        let Some(close) = before[..comma].iter().rposition(|&c| !is_blank(c)) else {
            continue;
        };
        if before[close] == b'}' && comma + 1 >= lo {
            return Some(comma + 1);
        }
    }
    None
}

/// The first likely event start at or after `from` in `window` (the stream's bytes from some offset
/// on), judged from what follows alone, so two readers looking from the same offset at the same
/// bytes agree without talking (the page's reader workers: one ends its shard where the next
/// begins): a comma or newline whose next non-blank byte is `{`. The cut goes after the comma,
/// or at the newline. `None` when no such `{` is within `window` (look again with more bytes).
pub fn find_cut_forward(window: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < window.len() {
        let at = i + memchr::memchr2(b',', b'\n', window.get(i..)?)?;
        let next = window[at + 1..].iter().position(|&c| !is_blank(c));
        if let Some(n) = next {
            if window[at + 1 + n] == b'{' {
                return Some(if window[at] == b',' { at + 1 } else { at });
            }
        }
        i = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kineto_lines_cut_at_the_newline_before_an_event() {
        let w = b"{\"traceEvents\": [\n  {\"ph\": \"X\"},\n  {\"ph\": \"i\"}\n]}";
        let at = find_cut(w, 1, usize::MAX).unwrap_or(0);
        assert_eq!(&w[at..at + 4], b"\n  {");
        assert_eq!(&w[at - 2..at], b"},");
    }

    #[test]
    fn forward_cuts_agree_from_the_same_offset_and_need_the_brace() {
        let w = b"{\"a\": 1},\n  {\"b\": 2}, {\"c\": [1, 2]},\n  ";
        // After `},` (the comma is followed by blanks and `{`): at the newline.
        assert_eq!(find_cut_forward(w, 0), Some(9));
        assert_eq!(find_cut_forward(w, 9), Some(9));
        assert_eq!(find_cut_forward(w, 10), Some(21));
        // `[1, 2]`'s comma is not followed by `{`; the last comma's `{` is not in the window yet.
        assert_eq!(find_cut_forward(w, 22), None);
    }

    #[test]
    fn minified_text_cuts_after_the_comma() {
        let w = br#"[{"a":1},{"b":{"c":2}}, {"d":3}]"#;
        let at = find_cut(w, 1, usize::MAX).unwrap_or(0);
        assert_eq!(&w[at..], br#" {"d":3}]"#);
        // Nothing before `from`, nothing more than `limit` back.
        assert_eq!(find_cut(w, 24, usize::MAX), None);
        assert_eq!(find_cut(w, 1, 6), None);
        assert_eq!(find_cut(b"{\"a\": 1}", 0, usize::MAX), None);
    }
}
