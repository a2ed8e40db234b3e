//! Exact floats for JSON text the CLI printed. serde_json's default parser may put the last bit
//! of a long float off by one (its `float_roundtrip` feature fixes that, but switching it on for
//! the wheel alone would build core with other features than the CLI's: a second release build
//! of core and the digest writer, and a core whose args parsing could differ from the CLI's).
//! So the text is parsed as usual, then every float is parsed again from its own characters with
//! the standard library's correctly rounded parser. serde_json prints an object's keys in the
//! order its map iterates them, so the numbers of the text and of the value come in one order.

use serde_json::{Number, Value};

/// The number tokens of JSON text, in order (strings skipped).
fn number_tokens(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        match b[k] {
            b'"' => {
                k += 1;
                while k < b.len() && b[k] != b'"' {
                    k += if b[k] == b'\\' { 2 } else { 1 };
                }
                k += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = k;
                while k < b.len() && matches!(b[k], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    k += 1;
                }
                out.push(&text[start..k]);
            }
            _ => k += 1,
        }
    }
    out
}

fn fix<'a>(v: &mut Value, tokens: &mut impl Iterator<Item = &'a str>) {
    match v {
        Value::Number(n) => {
            let Some(tok) = tokens.next() else { return };
            if n.is_f64() {
                if let Some(x) = tok.parse::<f64>().ok().and_then(Number::from_f64) {
                    *n = x;
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| fix(x, tokens)),
        Value::Object(o) => o.values_mut().for_each(|x| fix(x, tokens)),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// `text` parsed, its floats exactly as written (`Value::Null` when it is not JSON).
pub fn parse(text: &str) -> Value {
    let mut v: Value = serde_json::from_str(text).unwrap_or_default();
    fix(&mut v, &mut number_tokens(text).into_iter());
    v
}
