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
    /// A PyTorch Flight Recorder dump (pickle or JSON).
    FlightRecorder,
}

impl Format {
    pub fn label(self) -> &'static str {
        match self {
            Format::Kineto => "kineto",
            Format::Snapshot => "cuda_snapshot",
            Format::MemoryTimeline => "memory_timeline",
            Format::MemoryTimelineRaw => "memory_timeline_raw",
            Format::Chakra => "chakra_et",
            Format::FlightRecorder => "flight_recorder",
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

/// Well-known file signatures, so a renamed file is refused by what it is.
const MAGIC: &[(&[u8], &str)] = &[
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (
        b"PK\x03\x04",
        "a zip archive (torch.save checkpoints are zip files; profiler traces are JSON)",
    ),
    (b"\x7fELF", "an ELF executable"),
    (
        b"BZh",
        "bzip2-compressed (only gzip is read: decompress it first)",
    ),
    (
        b"\xfd7zXZ\x00",
        "xz-compressed (only gzip is read: decompress it first)",
    ),
    (
        b"\x28\xb5\x2f\xfd",
        "zstd-compressed (only gzip is read: decompress it first)",
    ),
    (
        b"SQLite format 3\x00",
        "an SQLite database (an Nsight Systems export?)",
    ),
];

/// Names the format of decoded bytes, or says why it is none of ours.
pub fn sniff(prefix: &[u8]) -> Result<Format, String> {
    if let Some((_, what)) = MAGIC.iter().find(|(m, _)| prefix.starts_with(m)) {
        return Err(format!("this is {what}, not a profiler file"));
    }
    let b = prefix.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(prefix);
    if b.len() >= 2 && b[0] == 0x80 && (2..=5).contains(&b[1]) {
        // Flight Recorder dumps name `pg_config` right after `version`; their entries carry
        // `profiling_name`. No allocator snapshot holds either.
        if contains(b, b"pg_config") || contains(b, b"profiling_name") {
            return Ok(Format::FlightRecorder);
        }
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
            // `_dump_fr_trace_json` sorts its keys: `comm_lib_version`, `entries` (whose first
            // entry names `profiling_name`), `pg_config`, `pg_status`, `version`.
            if contains(t, b"\"profiling_name\"")
                || contains(t, b"\"pg_config\"")
                || contains(t, b"\"pg_status\"")
            {
                return Ok(Format::FlightRecorder);
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
        Some(b'(') => Err(
            "a text pickle (protocol 0 or 1)? Only binary pickles (protocols 2–5, \
                           what torch writes) are read"
                .into(),
        ),
        Some(b'<') => Err("an HTML or XML document, not JSON, gzip or a pickle".into()),
        Some(_) => Err("not JSON, gzip or a pickle".into()),
        None if b.is_empty() => Err("the file is empty".into()),
        None => Err(format!(
            "the first {} bytes are all whitespace",
            b.len().min(SNIFF_BYTES)
        )),
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
        assert_eq!(
            sniff(b"\x80\x02}(X\x07\x00\x00\x00versionq\x00X\x04\x00\x00\x002.10X\t\x00\x00\x00pg_config"),
            Ok(Format::FlightRecorder)
        );
        assert_eq!(
            sniff(b"{\"comm_lib_version\":\"\",\"entries\":[{\"profiling_name\":\"gloo:all_reduce\"}]}"),
            Ok(Format::FlightRecorder)
        );
        assert!(sniff(b"hello").is_err());
        assert_eq!(sniff(b""), Err("the file is empty".into()));
        assert_eq!(
            sniff(b" \n "),
            Err("the first 3 bytes are all whitespace".into())
        );
        assert!(sniff(b"\x89PNG\r\n\x1a\n\0\0").is_err_and(|m| m.contains("PNG image")));
        assert!(sniff(b"PK\x03\x04....").is_err_and(|m| m.contains("torch.save")));
        assert!(sniff(b"{\"a\": 1}").is_err());
    }
}
