//! The message protocol's rules as pure functions over plain values: who may send (the origin
//! allow-list), what a time range in seconds becomes on the timeline (Perfetto's arithmetic), and
//! which text and numbers a message may carry. [`super::decode`] reads a message's fields into
//! these; nothing here touches the browser, so the wasm tests check it value by value.

/// Longest text a message may carry in one field (an op or kernel name, a file name), in UTF-16
/// units: templated kernel names run to a few thousand; beyond this a message is refused unread,
/// so a 100 MB string is never copied into wasm memory.
pub const MAX_TEXT: u32 = 64 * 1024;

/// The model's time limit (±4·10¹⁸ ns, see `ingest`): a range beyond it is refused.
const MAX_NS: f64 = 4.0e18;

/// Why a message was not acted on. Counted per reason and reported to the host on `stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reject {
    /// Not from the embedding parent or the opener, or an origin the `?origins=` list lacks.
    Untrusted,
    /// Neither `"PING"`, an ArrayBuffer, `{perfetto: …}` nor `{tracelight: …}`.
    UnknownShape,
    /// A known message with a field missing or of the wrong type or range.
    BadField,
    /// Text longer than [`MAX_TEXT`].
    TooLong,
    /// A second trace after one sent without `keepApiOpen` (Perfetto closes the API then).
    ApiClosed,
    /// A well-formed command that names what the page does not have (a tab, an op).
    NotFound,
}

impl Reject {
    pub const ALL: [Reject; 6] = [
        Reject::Untrusted,
        Reject::UnknownShape,
        Reject::BadField,
        Reject::TooLong,
        Reject::ApiClosed,
        Reject::NotFound,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Reject::Untrusted => "untrusted",
            Reject::UnknownShape => "unknown_shape",
            Reject::BadField => "bad_field",
            Reject::TooLong => "too_long",
            Reject::ApiClosed => "api_closed",
            Reject::NotFound => "not_found",
        }
    }
}

/// The origins `?origins=` lists (comma-separated, e.g. `https://wiki.example.org`). Given, a
/// message is accepted only from one of them; absent, only from the embedding parent or the
/// opener (Perfetto's rule).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origins(Option<Vec<String>>);

impl Origins {
    /// Parses the parameter's value; entries that are not `scheme://host[:port]` are dropped, so a
    /// list of nothing but junk accepts nothing (it never widens to "anyone").
    pub fn parse(param: Option<&str>) -> Origins {
        let Some(p) = param else {
            return Origins(None);
        };
        let list = p
            .split(',')
            .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
            .filter(|o| is_origin(o))
            .collect();
        Origins(Some(list))
    }

    /// Whether a message from `origin` may be acted on, given whether its source is the parent
    /// or opener.
    pub fn allows(&self, origin: &str, from_parent_or_opener: bool) -> bool {
        match &self.0 {
            None => from_parent_or_opener,
            Some(list) => list.iter().any(|o| o == origin),
        }
    }
}

/// `scheme://host[:port]` with no path, query or credentials.
fn is_origin(o: &str) -> bool {
    let Some((scheme, rest)) = o.split_once("://") else {
        return false;
    };
    !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-')
        && !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
}

/// The timeline window for a host's `{timeStart, timeEnd, viewPercentage}` (seconds in the trace's
/// clock), as Perfetto computes it: with `viewPercentage` p in (0, 1] (else 0.5, as Perfetto
/// falls back), the range padded by `(1 - p)/2` of its length on each side; without it, the
/// current zoom kept and centred on the range if the range fits in half of `visible`, else the
/// range padded to fill a fifth of the window.
pub fn window_ns(
    start_s: f64,
    end_s: f64,
    view_pct: Option<f64>,
    visible: (i64, i64),
) -> Result<(i64, i64), Reject> {
    let (a, b) = (start_s * 1e9, end_s * 1e9);
    if !(a.is_finite() && b.is_finite() && a.abs() <= MAX_NS && b.abs() <= MAX_NS && a <= b) {
        return Err(Reject::BadField);
    }
    let d = b - a;
    let (lo, hi) = match view_pct {
        Some(p) => {
            let p = if p > 0.0 && p <= 1.0 { p } else { 0.5 };
            let pad = d * (1.0 - p) / 2.0;
            (a - pad, b + pad)
        }
        None => {
            let vis = (visible.1 - visible.0) as f64;
            if d * 2.0 > vis {
                (a - 2.0 * d, b + 2.0 * d)
            } else {
                let mid = a + d / 2.0;
                (mid - vis / 2.0, mid + vis / 2.0)
            }
        }
    };
    let lo = lo.round().clamp(-MAX_NS, MAX_NS) as i64;
    let hi = (hi.round().clamp(-MAX_NS, MAX_NS) as i64).max(lo.saturating_add(1));
    Ok((lo, hi))
}

/// A host's `occurrence` (1-based, in time order) as an index, when it is a whole number ≥ 1.
pub fn occurrence(v: Option<f64>) -> Result<usize, Reject> {
    match v {
        None => Ok(0),
        Some(n) if n.is_finite() && n >= 1.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX) => {
            Ok(n as usize - 1)
        }
        Some(_) => Err(Reject::BadField),
    }
}

/// A byte count (`bytesTotal`): a whole number from 0 to 2⁵³; 0 or absent means unknown.
pub fn byte_total(v: Option<f64>) -> Result<Option<u64>, Reject> {
    match v {
        None => Ok(None),
        Some(n)
            if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9.007_199_254_740_992e15 =>
        {
            Ok((n > 0.0).then_some(n as u64))
        }
        Some(_) => Err(Reject::BadField),
    }
}

/// A file name for a posted trace: the host's `fileName`, else its `title`, else "posted trace";
/// control characters and path separators become spaces (it is shown and names the file in
/// errors, never used as a path).
pub fn file_name(file_name: Option<&str>, title: Option<&str>) -> String {
    let raw = file_name
        .or(title)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or("posted trace");
    raw.chars()
        .map(|c| {
            if c.is_control() || c == '/' || c == '\\' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// Whether the page runs in embed mode: `?embed=1`, or Perfetto's `mode=embedded` /
/// `hideSidebar=true`, in the query string or in the hash (Perfetto puts its route arguments
/// there: `#!/viewer?mode=embedded`).
pub fn embed_mode(query: &str, hash: &str) -> bool {
    let pairs = query
        .trim_start_matches('?')
        .split('&')
        .chain(hash.trim_start_matches('#').split(['&', '?']));
    pairs
        .filter_map(|kv| kv.split_once('='))
        .any(|(k, v)| match k {
            "embed" | "hideSidebar" => matches!(v, "1" | "true"),
            "mode" => v == "embedded",
            _ => false,
        })
}
