//! Deep links: the URL hash holds the view, so a copied link reopens it for a colleague with the
//! same file: `#tab=timeline&file=0&visStart=A&visEnd=B&ts=T&dur=D&track=…` (the window in trace
//! ns, Perfetto's `visStart`/`visEnd`; the selected slice by its start, duration and track),
//! `step=ProfilerStep%2312` (that step's window), `op=aten%3A%3Amm&n=3` / `kernel=…&n=3` (the
//! Nth occurrence in time order, with the others one click away). Names are percent-encoded.
//! The older `t=A,B` and `sel=INDEX` are still read. Unknown keys are ignored and bad values
//! dropped: a hand-edited hash never breaks the page.

use crate::model::Trace;

/// A slice named by what a colleague's copy of the file also has (indices could differ between
/// versions of the reader).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SliceRef {
    pub ts: i64,
    pub dur: i64,
    /// The track's label as the timeline shows it (`Trace::track_label`).
    pub track: String,
}

/// What a `reveal` names: a CPU op or a GPU kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    Op,
    Kernel,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeepLink {
    pub tab: Option<String>,
    pub file: Option<usize>,
    /// Visible window `[start_ns, end_ns)` in the trace's clock.
    pub window: Option<(i64, i64)>,
    /// Selected slice index (older links).
    pub sel: Option<u32>,
    /// Selected slice.
    pub slice: Option<SliceRef>,
    /// A step by name (`ProfilerStep#12`): its window when no window is given.
    pub step: Option<String>,
    /// An op or kernel by name and occurrence (1-based, time order).
    pub reveal: Option<(Named, String, u32)>,
    /// The tables' scope (`scope=step:3`, `annotation:NAME[:K]`, `window:A-B`): the text of
    /// [`crate::analysis::scope::ScopeSpec`], the same as the CLI's `--scope`.
    pub scope: Option<String>,
}

/// Percent-encodes everything but unreserved characters and `:` (so `aten::mm` stays legible).
pub fn encode_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~:!*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` (and `+` as a space); a malformed escape is kept as text, bytes that are not
/// UTF-8 become U+FFFD.
pub fn decode_text(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl DeepLink {
    /// Parses a hash with or without its leading `#`.
    pub fn parse(hash: &str) -> DeepLink {
        let mut d = DeepLink::default();
        let (mut vis, mut ts, mut dur, mut track, mut n) = ((None, None), None, None, None, None);
        let mut named = None;
        for kv in hash.trim_start_matches('#').split('&') {
            let Some((k, v)) = kv.split_once('=') else {
                continue;
            };
            match k {
                "tab" if !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric()) => {
                    d.tab = Some(v.to_owned())
                }
                "file" => d.file = v.parse().ok(),
                "sel" => d.sel = v.parse().ok(),
                "t" => {
                    d.window = v
                        .split_once(',')
                        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                }
                "visStart" => vis.0 = v.parse().ok(),
                "visEnd" => vis.1 = v.parse().ok(),
                "ts" => ts = v.parse().ok(),
                "dur" => dur = v.parse().ok(),
                "track" => track = Some(decode_text(v)),
                "step" if !v.is_empty() => d.step = Some(decode_text(v)),
                "op" if !v.is_empty() => named = Some((Named::Op, decode_text(v))),
                "kernel" if !v.is_empty() => named = Some((Named::Kernel, decode_text(v))),
                "n" => n = v.parse::<u32>().ok().filter(|&n| n >= 1),
                "scope" if !v.is_empty() => d.scope = Some(decode_text(v)),
                _ => {}
            }
        }
        if let (Some(a), Some(b)) = vis {
            d.window = Some((a, b));
        }
        d.window = d.window.filter(|(a, b)| a < b);
        if let (Some(ts), Some(dur), Some(track)) = (ts, dur, track) {
            d.slice = (dur >= 0).then_some(SliceRef { ts, dur, track });
        }
        d.reveal = named.map(|(k, name)| (k, name, n.unwrap_or(1)));
        d
    }

    /// The hash text, `#` included; keys in a fixed order.
    pub fn encode(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.tab {
            parts.push(format!("tab={t}"));
        }
        if let Some(f) = self.file {
            parts.push(format!("file={f}"));
        }
        if let Some((a, b)) = self.window {
            parts.push(format!("visStart={a}&visEnd={b}"));
        }
        if let Some(s) = &self.step {
            parts.push(format!("step={}", encode_text(s)));
        }
        if let Some((k, name, n)) = &self.reveal {
            let key = match k {
                Named::Op => "op",
                Named::Kernel => "kernel",
            };
            parts.push(format!("{key}={}&n={n}", encode_text(name)));
        }
        if let Some(s) = &self.scope {
            parts.push(format!("scope={}", encode_text(s)));
        }
        if let Some(s) = &self.slice {
            parts.push(format!(
                "ts={}&dur={}&track={}",
                s.ts,
                s.dur,
                encode_text(&s.track)
            ));
        } else if let Some(s) = self.sel {
            parts.push(format!("sel={s}"));
        }
        format!("#{}", parts.join("&"))
    }
}

impl SliceRef {
    /// Slice `i` of `t`, named for a link.
    pub fn of(t: &Trace, i: usize) -> SliceRef {
        let s = &t.slices;
        SliceRef {
            ts: s.start[i],
            dur: s.end(i) - s.start[i],
            track: t.track_label(s.track[i] as usize),
        }
    }

    /// The slice this names in `t`: same start, duration and track label (the first if several).
    pub fn find(&self, t: &Trace) -> Option<u32> {
        let s = &t.slices;
        (0..s.len())
            .find(|&i| {
                s.start[i] == self.ts
                    && s.end(i) - s.start[i] == self.dur
                    && t.track_label(s.track[i] as usize) == self.track
            })
            .map(|i| i as u32)
    }
}

/// The window `[start, end)` of the step named `name` (`ProfilerStep#12`): its host-side slice,
/// the earliest if the name repeats.
pub fn step_window(t: &Trace, name: &str) -> Option<(i64, i64)> {
    let id = t.strings.get(name)?;
    let s = &t.slices;
    (0..s.len())
        .filter(|&i| s.name[i] == id && !s.kind[i].is_gpu_work())
        .min_by_key(|&i| (s.start[i], i))
        .map(|i| (s.start[i], s.end(i).max(s.start[i] + 1)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::view::testutil::trace_of;

    #[test]
    fn round_trips() {
        let d = DeepLink {
            tab: Some("timeline".into()),
            file: Some(1),
            window: Some((-5, 1_700_000_000_123_456)),
            sel: None,
            slice: Some(SliceRef {
                ts: 1_700_000_000_000_782_800,
                dur: 30_048,
                track: "GPU 0 / stream 7 & co #1".into(),
            }),
            step: Some("ProfilerStep#12".into()),
            reveal: Some((Named::Kernel, "void f<a, b>(int) ünï".into(), 3)),
            scope: Some("annotation:## backward ##:2".into()),
        };
        let text = d.encode();
        assert!(text.starts_with("#tab=timeline&file=1&visStart=-5&visEnd=1700000000123456&step=ProfilerStep%2312&kernel=void%20f%3Ca%2C%20b%3E(int)%20%C3%BCn%C3%AF&n=3&scope=annotation:%23%23%20backward%20%23%23:2&ts=1700000000000782800&dur=30048&track=GPU%200%20%2F%20stream%207%20%26%20co%20%231"), "{text}");
        assert_eq!(text.matches('#').count(), 1);
        assert_eq!(DeepLink::parse(&text), d);
    }

    #[test]
    fn older_links_and_perfetto_names_are_read() {
        let d = DeepLink::parse("#tab=timeline&file=0&t=10,20&sel=42");
        assert_eq!((d.window, d.sel), (Some((10, 20)), Some(42)));
        let d = DeepLink::parse("visStart=100&visEnd=200&op=aten::mm");
        assert_eq!(d.window, Some((100, 200)));
        assert_eq!(d.reveal, Some((Named::Op, "aten::mm".into(), 1)));
        assert_eq!(decode_text("a%2"), "a%2");
        assert_eq!(decode_text("%zz%41+b"), "%zzA b");
        assert_eq!(decode_text("%FF"), "\u{FFFD}");
    }

    #[test]
    fn garbage_is_ignored() {
        let d = DeepLink::parse("#t=9,3&sel=x&tab=<script>&file=2&zzz&n=0&ts=5&dur=-1&track=x");
        assert_eq!(
            d,
            DeepLink {
                file: Some(2),
                ..DeepLink::default()
            }
        );
        assert_eq!(DeepLink::parse(""), DeepLink::default());
        assert_eq!(DeepLink::parse("#visStart=5"), DeepLink::default());
    }

    #[test]
    fn slices_and_steps_are_found_by_what_a_copy_of_the_file_also_has() {
        // Two kernels with one start on different streams; the second's reference finds it.
        let t = trace_of(&[
            ("ProfilerStep#1", "user_annotation", 1, 0.0, 100.0),
            ("ProfilerStep#2", "user_annotation", 1, 100.0, 50.0),
            ("k", "kernel", 7, 10.0, 5.0),
            ("k", "kernel", 8, 10.0, 5.0),
        ]);
        let s = &t.slices;
        let on8 = (0..s.len())
            .find(|&i| t.str(s.name[i]) == "k" && t.track_label(s.track[i] as usize).contains('8'))
            .unwrap();
        let r = SliceRef::of(&t, on8);
        assert_eq!((r.ts - s.start[on8], r.dur), (0, 5_000));
        assert_eq!(r.find(&t), Some(on8 as u32));
        let gone = SliceRef { dur: 4_000, ..r };
        assert_eq!(gone.find(&t), None);
        let (a, b) = step_window(&t, "ProfilerStep#2").unwrap();
        assert_eq!(b - a, 50_000);
        assert_eq!(step_window(&t, "ProfilerStep#3"), None);
    }
}
