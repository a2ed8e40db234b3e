//! Text that stays short and diffs line by line: JSON with one table row per line and long tables
//! cut to their first rows, long strings cut, and the compact line diff shown on a mismatch.

use serde_json::Value;

/// Rows kept of any table (an array of objects); the rest are counted.
pub const TOP_ROWS: usize = 12;
/// Characters kept of any string.
const MAX_CHARS: usize = 120;
/// Arrays of scalars that fit on one line this wide stay on one line.
const INLINE_WIDTH: usize = 100;
/// A table row wider than this (an object holding tables of its own) is laid out like the rest.
const ROW_WIDTH: usize = 500;

/// `s` cut to [`MAX_CHARS`] characters, saying how long it was.
pub fn clip(s: &str) -> String {
    clip_to(s, MAX_CHARS)
}

/// `s` cut to `max` characters, saying how long it was.
pub fn clip_to(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((at, _)) => format!("{}… ({} chars)", &s[..at], s.chars().count()),
    }
}

/// `v` with every string clipped (rows rendered on one line must not carry a 1 MB name).
fn clipped(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(clip(s)),
        Value::Array(a) => Value::Array(a.iter().map(clipped).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), clipped(v))).collect()),
        other => other.clone(),
    }
}

fn compact(v: &Value) -> String {
    serde_json::to_string(&clipped(v)).unwrap_or_default()
}

/// Pretty JSON, keys sorted (serde_json's map is ordered), except that tables print one compact
/// row per line (unless wider than [`ROW_WIDTH`]), at most [`TOP_ROWS`] of them, and short scalar
/// arrays print on one line.
pub fn json(v: &Value) -> String {
    let mut out = String::new();
    write(&mut out, v, 0);
    out.push('\n');
    out
}

fn write(out: &mut String, v: &Value, indent: usize) {
    let pad = "  ".repeat(indent + 1);
    match v {
        Value::Object(o) if !o.is_empty() => {
            out.push_str("{\n");
            for (k, (key, val)) in o.iter().enumerate() {
                out.push_str(&format!("{pad}{}: ", compact(&Value::String(key.clone()))));
                write(out, val, indent + 1);
                out.push_str(if k + 1 < o.len() { ",\n" } else { "\n" });
            }
            out.push_str(&"  ".repeat(indent));
            out.push('}');
        }
        Value::Array(a) if !a.is_empty() => {
            let table = a.iter().any(|x| x.is_object() || x.is_array());
            let one_line = compact(v);
            if !table && one_line.chars().count() <= INLINE_WIDTH {
                out.push_str(&one_line);
                return;
            }
            out.push_str("[\n");
            let shown = if table {
                a.len().min(TOP_ROWS)
            } else {
                a.len()
            };
            for (k, x) in a.iter().take(shown).enumerate() {
                out.push_str(&pad);
                let row = compact(x);
                if row.chars().count() <= ROW_WIDTH {
                    out.push_str(&row);
                } else {
                    write(out, x, indent + 1);
                }
                out.push_str(if k + 1 < shown { ",\n" } else { "\n" });
            }
            if shown < a.len() {
                out.push_str(&format!("{pad}… {} more rows\n", a.len() - shown));
            }
            out.push_str(&"  ".repeat(indent));
            out.push(']');
        }
        other => out.push_str(&compact(other)),
    }
}

/// `text` cut to its first `max` lines, saying how many there were.
pub fn first_lines(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: String = lines
        .iter()
        .take(max)
        .map(|l| format!("{}\n", clip(l)))
        .collect();
    if lines.len() > max {
        out += &format!("… {} more lines\n", lines.len() - max);
    }
    out
}

/// Lines of context around the differing run.
const CONTEXT: usize = 3;
/// Lines shown of each side of the differing run.
const SHOWN: usize = 20;

/// A compact diff: the common head and tail are skipped and the differing run in between is
/// shown with [`CONTEXT`] lines around it, numbered as in `want`. When both sides of the run have
/// the same number of lines (values changed in place, the usual case), only the lines that differ
/// are shown, each `-` beside its `+`; otherwise each side of the run, up to [`SHOWN`] lines.
pub fn line_diff(want: &str, got: &str) -> String {
    let w: Vec<&str> = want.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    let head = w.iter().zip(&g).take_while(|(a, b)| a == b).count();
    let tail = w[head..]
        .iter()
        .rev()
        .zip(g[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (w_end, g_end) = (w.len() - tail, g.len() - tail);
    let mut out = format!(
        "@@ expected lines {}..{} of {}, actual {}..{} of {} @@\n",
        head + 1,
        w_end,
        w.len(),
        head + 1,
        g_end,
        g.len()
    );
    let context = |out: &mut String, from: usize, to: usize| {
        for l in &w[from..to] {
            *out += &format!("  {}\n", clip(l));
        }
    };
    if w_end - head == g_end - head {
        let changed: Vec<usize> = (head..w_end).filter(|&i| w[i] != g[i]).collect();
        let mut shown_to = head.saturating_sub(CONTEXT);
        for (k, &i) in changed.iter().enumerate() {
            if k == SHOWN {
                out += &format!("… {} more changed lines\n", changed.len() - SHOWN);
                return out;
            }
            let from = i.saturating_sub(CONTEXT).max(shown_to);
            if from > shown_to && k > 0 {
                out += &format!("@@ line {} @@\n", from + 1);
            }
            context(&mut out, from, i);
            out += &format!("- {}\n+ {}\n", clip(w[i]), clip(g[i]));
            shown_to = i + 1;
            let next = changed.get(k + 1).copied().unwrap_or(w.len());
            let to = (i + 1 + CONTEXT).min(next).min(w.len());
            context(&mut out, shown_to, to);
            shown_to = to;
        }
        return out;
    }
    context(&mut out, head.saturating_sub(CONTEXT), head);
    for (sign, side) in [("-", &w[head..w_end]), ("+", &g[head..g_end])] {
        for l in side.iter().take(SHOWN) {
            out += &format!("{sign} {}\n", clip(l));
        }
        if side.len() > SHOWN {
            out += &format!("{sign} … {} more lines\n", side.len() - SHOWN);
        }
    }
    context(&mut out, w_end, (w_end + CONTEXT).min(w.len()));
    out
}
