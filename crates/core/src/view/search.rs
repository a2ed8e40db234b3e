//! Finding slices by name: a case-insensitive substring, or a regular expression written `/re/`
//! (`regex-lite` syntax: character classes and case folding are ASCII, as kernel and op names are).

use crate::model::{StrId, Trace};

pub enum Matcher {
    Substring(String),
    Regex(regex_lite::Regex),
}

impl Matcher {
    /// `None` for an empty query; an error message for a bad `/re/`.
    pub fn parse(q: &str) -> Result<Option<Matcher>, String> {
        let q = q.trim();
        if q.is_empty() {
            return Ok(None);
        }
        if q.len() >= 2 && q.starts_with('/') && q.ends_with('/') {
            let body = &q[1..q.len() - 1];
            return regex_lite::RegexBuilder::new(body)
                .size_limit(1 << 20)
                .build()
                .map(|r| Some(Matcher::Regex(r)))
                .map_err(|e| format!("bad regex: {e}"));
        }
        Ok(Some(Matcher::Substring(q.to_lowercase())))
    }

    pub fn is_match(&self, name: &str) -> bool {
        match self {
            Matcher::Substring(s) => name.to_lowercase().contains(s.as_str()),
            Matcher::Regex(r) => r.is_match(name),
        }
    }
}

/// Matching slices in time order (ties by index). Each distinct name is tested once.
pub fn find(t: &Trace, m: &Matcher) -> Vec<u32> {
    let names = &t.slices.name;
    let mut verdict: Vec<u8> = vec![0; t.strings.len()];
    let mut out = Vec::new();
    for (i, &n) in names.iter().enumerate() {
        let Some(v) = verdict.get_mut(n.index()) else {
            continue;
        };
        if *v == 0 {
            *v = if m.is_match(t.str(StrId(n.0))) { 2 } else { 1 };
        }
        if *v == 2 {
            out.push(i as u32);
        }
    }
    crate::sort::by_key(&mut out, |&i| (t.slices.start[i as usize], i));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::testutil::trace_of;

    fn t() -> Trace {
        trace_of(&[
            ("aten::mm", "cpu_op", 1, 30.0, 5.0),
            ("aten::addmm", "cpu_op", 1, 10.0, 5.0),
            ("aten::relu", "cpu_op", 1, 20.0, 5.0),
            ("sgemm_128", "kernel", 7, 31.0, 2.0),
        ])
    }

    #[test]
    fn substring_is_case_insensitive_and_time_ordered() {
        let t = t();
        let Ok(Some(m)) = Matcher::parse("MM") else {
            panic!()
        };
        let hits = find(&t, &m);
        let names: Vec<&str> = hits
            .iter()
            .map(|&i| t.str(t.slices.name[i as usize]))
            .collect();
        assert_eq!(names, ["aten::addmm", "aten::mm", "sgemm_128"]);
    }

    #[test]
    fn regex_between_slashes() {
        let t = t();
        let Ok(Some(m)) = Matcher::parse("/^aten::(mm|relu)$/") else {
            panic!()
        };
        assert_eq!(find(&t, &m).len(), 2);
        assert!(Matcher::parse("/(/").is_err());
        assert!(matches!(Matcher::parse("  "), Ok(None)));
    }
}
