//! Format detection by content, never by file name: a `.json` can be a trace, a memory timeline or an
//! execution trace, and users rename files. The decision looks only at the first decoded bytes.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Kineto,
    Snapshot,
    MemoryTimeline,
    MemoryTimelineRaw,
    Chakra,
}

impl Format {
    pub fn label(self) -> &'static str {
        match self {
            Format::Kineto => "kineto",
            Format::Snapshot => "cuda_snapshot",
            Format::MemoryTimeline => "memory_timeline",
            Format::MemoryTimelineRaw => "memory_timeline_raw",
            Format::Chakra => "chakra_et",
        }
    }
}

/// How many decoded bytes the sniffer wants before deciding (less is fine at end of input).
pub const SNIFF_BYTES: usize = 64 * 1024;

pub fn is_gzip(b: &[u8]) -> bool {
    b.starts_with(&[0x1f, 0x8b])
}

fn skip_ws(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
        .count();
    &b[n..]
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// Names the format of decoded bytes, or says why it is none of ours.
pub fn sniff(prefix: &[u8]) -> Result<Format, String> {
    let b = prefix.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(prefix);
    if b.len() >= 2 && b[0] == 0x80 && (2..=5).contains(&b[1]) {
        return Ok(Format::Snapshot);
    }
    let t = skip_ws(b);
    match t.first() {
        Some(b'{') => {
            for key in [
                &b"\"traceEvents\""[..],
                b"\"schemaVersion\"",
                b"\"deviceProperties\"",
                b"\"distributedInfo\"",
                b"\"computeProperties\"",
            ] {
                if contains(t, key) {
                    return Ok(Format::Kineto);
                }
            }
            if contains(t, b"\"nodes\"") && contains(t, b"\"schema\"") {
                return Ok(Format::Chakra);
            }
            if contains(t, b"\"ph\"") {
                return Ok(Format::Kineto);
            }
            Err("a JSON object with none of the keys of a Kineto trace or execution trace".into())
        }
        Some(b'[') => {
            let inner = skip_ws(&t[1..]);
            match inner.first() {
                Some(b'{') | Some(b']') => Ok(Format::Kineto),
                Some(b'[') => {
                    // `[times, sizes]`: the first inner array holds numbers and the second arrays;
                    // raw: `[[t, action, bytes, category], ...]`, arrays of 4 numbers.
                    let first = skip_ws(&inner[1..]);
                    if first.first() == Some(&b'[') {
                        return Err("nested arrays that are no memory timeline".into());
                    }
                    let close = memchr::memchr(b']', inner).unwrap_or(inner.len());
                    let commas = inner[..close].iter().filter(|&&c| c == b',').count();
                    if close < inner.len() && commas == 3 {
                        let rest = skip_ws(&inner[close + 1..]);
                        let rest = rest.strip_prefix(b",").map(skip_ws).unwrap_or(rest);
                        if rest.first() == Some(&b'[') && skip_ws(&rest[1..]).first() != Some(&b'[')
                        {
                            return Ok(Format::MemoryTimelineRaw);
                        }
                    }
                    Ok(Format::MemoryTimeline)
                }
                _ => Err("a JSON array that is neither trace events nor a memory timeline".into()),
            }
        }
        Some(_) => Err("not JSON, gzip or a pickle".into()),
        None => Err("the file is empty".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_decides_the_format() {
        assert_eq!(
            sniff(b"{\"schemaVersion\": 1, \"traceEvents\": []}"),
            Ok(Format::Kineto)
        );
        assert_eq!(sniff(b" [ {\"ph\":\"X\"} ]"), Ok(Format::Kineto));
        assert_eq!(
            sniff(b"{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": []}"),
            Ok(Format::Chakra)
        );
        assert_eq!(
            sniff(b"[[1.0, 2.0], [[0, 1, 2]]]"),
            Ok(Format::MemoryTimeline)
        );
        assert_eq!(
            sniff(b"[[-1, 1, 4096, 0], [5, 2, 8, 3]]"),
            Ok(Format::MemoryTimelineRaw)
        );
        assert_eq!(sniff(&[0x80, 4, 0x95]), Ok(Format::Snapshot));
        assert!(sniff(b"hello").is_err());
        assert!(sniff(b"").is_err());
        assert!(sniff(b"{\"a\": 1}").is_err());
    }
}
