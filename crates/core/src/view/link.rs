//! Deep links: the URL hash `#tab=timeline&file=0&t=START,END&sel=IDX` holds the view, so a copied
//! link reopens at the same window and selection. Unknown keys are ignored and bad values dropped:
//! a hand-edited hash never breaks the page.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeepLink {
    pub tab: Option<String>,
    pub file: Option<usize>,
    /// Visible window `[start_ns, end_ns)` in the trace's clock.
    pub window: Option<(i64, i64)>,
    /// Selected slice index.
    pub sel: Option<u32>,
}

impl DeepLink {
    /// Parses a hash with or without its leading `#`.
    pub fn parse(hash: &str) -> DeepLink {
        let mut d = DeepLink::default();
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
                        .filter(|(a, b)| a < b)
                }
                _ => {}
            }
        }
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
            parts.push(format!("t={a},{b}"));
        }
        if let Some(s) = self.sel {
            parts.push(format!("sel={s}"));
        }
        format!("#{}", parts.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let d = DeepLink {
            tab: Some("timeline".into()),
            file: Some(1),
            window: Some((-5, 1_700_000_000_123_456)),
            sel: Some(42),
        };
        assert_eq!(
            d.encode(),
            "#tab=timeline&file=1&t=-5,1700000000123456&sel=42"
        );
        assert_eq!(DeepLink::parse(&d.encode()), d);
    }

    #[test]
    fn garbage_is_ignored() {
        let d = DeepLink::parse("#t=9,3&sel=x&tab=<script>&file=2&zzz");
        assert_eq!(
            d,
            DeepLink {
                file: Some(2),
                ..DeepLink::default()
            }
        );
        assert_eq!(DeepLink::parse(""), DeepLink::default());
    }
}
