//! Rows of a report (a JSON array of objects, exactly as `tracelight analyze --json` prints it)
//! turned into Arrow columns: little-endian value buffers, offsets and validity bitmaps that the
//! Python side hands to `pyarrow.Array.from_buffers` as they are, so no Python object is made per
//! row. Types are inferred per column from the values: booleans, int64 (uint64 when a value needs
//! it), float64 when any value has a fraction or exponent, large_string, large_list and struct for
//! nested arrays and objects; null-only columns are Arrow nulls. A column mixing kinds that Arrow
//! cannot hold in one type (text and numbers) is kept as each value's JSON text.

use serde_json::Value;

/// One Arrow array: its name (the field's), logical kind, length, null count, buffers in Arrow's
/// order for that kind, and children (a list's items, a struct's fields).
pub struct Column {
    pub name: String,
    pub kind: &'static str,
    pub len: usize,
    pub nulls: usize,
    pub buffers: Vec<Option<Vec<u8>>>,
    pub children: Vec<Column>,
}

/// The kinds of the non-null values seen in a column.
#[derive(Default)]
struct Seen {
    bool: bool,
    int: bool,
    big_u64: bool,
    negative: bool,
    float: bool,
    string: bool,
    array: bool,
    object: bool,
}

impl Seen {
    fn of(vals: &[Option<&Value>]) -> Seen {
        let mut s = Seen::default();
        for v in vals.iter().flatten() {
            match v {
                Value::Null => {}
                Value::Bool(_) => s.bool = true,
                Value::Number(n) if n.is_i64() => {
                    s.int = true;
                    s.negative |= n.as_i64().is_some_and(|x| x < 0);
                }
                Value::Number(n) if n.is_u64() => s.big_u64 = true,
                Value::Number(_) => s.float = true,
                Value::String(_) => s.string = true,
                Value::Array(_) => s.array = true,
                Value::Object(_) => s.object = true,
            }
        }
        s
    }

    fn count(&self) -> usize {
        let numbers = self.int || self.big_u64 || self.float;
        [self.bool, numbers, self.string, self.array, self.object]
            .iter()
            .filter(|&&b| b)
            .count()
    }
}

/// A bitmap of `len` bits, bit k set when `f(k)`, least significant bit first (Arrow's order).
fn bitmap(len: usize, f: impl Fn(usize) -> bool) -> Vec<u8> {
    let mut out = vec![0u8; len.div_ceil(8)];
    for k in (0..len).filter(|&k| f(k)) {
        out[k / 8] |= 1 << (k % 8);
    }
    out
}

fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// The column of `vals` (one per row; `None` where the row has no such key).
pub fn column(name: &str, vals: &[Option<&Value>]) -> Column {
    let len = vals.len();
    let nulls = vals.iter().filter(|v| present(**v).is_none()).count();
    let validity = (nulls > 0).then(|| bitmap(len, |k| present(vals[k]).is_some()));
    let s = Seen::of(vals);
    let mut col = Column {
        name: name.to_owned(),
        kind: "null",
        len,
        nulls,
        buffers: vec![validity],
        children: Vec::new(),
    };
    if s.count() == 0 {
        col.buffers = vec![None];
        return col;
    }
    if s.count() > 1 {
        return text(col, vals, |v| v.to_string());
    }
    let le = |bytes: Vec<u8>| Some(bytes);
    if s.bool {
        col.kind = "bool";
        let bits = bitmap(len, |k| {
            present(vals[k]).and_then(Value::as_bool) == Some(true)
        });
        col.buffers.push(le(bits));
    } else if s.float || (s.big_u64 && s.negative) {
        col.kind = "float64";
        let f = |v: &Value| v.as_f64().unwrap_or(0.0);
        col.buffers.push(le(values(vals, f, f64::to_le_bytes)));
    } else if s.big_u64 {
        col.kind = "uint64";
        let f = |v: &Value| v.as_u64().unwrap_or(0);
        col.buffers.push(le(values(vals, f, u64::to_le_bytes)));
    } else if s.int {
        col.kind = "int64";
        let f = |v: &Value| v.as_i64().unwrap_or(0);
        col.buffers.push(le(values(vals, f, i64::to_le_bytes)));
    } else if s.string {
        return text(col, vals, |v| v.as_str().unwrap_or_default().to_owned());
    } else if s.array {
        col.kind = "list";
        let mut offsets = Vec::with_capacity((len + 1) * 8);
        let mut items: Vec<Option<&Value>> = Vec::new();
        offsets.extend_from_slice(&0i64.to_le_bytes());
        for v in vals {
            if let Some(Value::Array(a)) = present(*v) {
                items.extend(a.iter().map(Some));
            }
            offsets.extend_from_slice(&(items.len() as i64).to_le_bytes());
        }
        col.buffers.push(le(offsets));
        col.children.push(column("item", &items));
    } else {
        col.kind = "struct";
        let mut keys: Vec<&str> = Vec::new();
        for v in vals {
            if let Some(Value::Object(o)) = present(*v) {
                for k in o.keys() {
                    if !keys.contains(&k.as_str()) {
                        keys.push(k);
                    }
                }
            }
        }
        col.children = keys
            .iter()
            .map(|k| {
                let field: Vec<Option<&Value>> = vals
                    .iter()
                    .map(|v| present(*v).and_then(|o| o.get(*k)))
                    .collect();
                column(k, &field)
            })
            .collect();
    }
    col
}

/// Each row's value through `f` as little-endian bytes (0 under a null: its validity bit is 0).
fn values<T: Default, const N: usize>(
    vals: &[Option<&Value>],
    f: impl Fn(&Value) -> T,
    bytes: fn(T) -> [u8; N],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(vals.len() * N);
    for v in vals {
        out.extend_from_slice(&bytes(present(*v).map_or_else(T::default, &f)));
    }
    out
}

/// A large_string column of each value's text.
fn text(mut col: Column, vals: &[Option<&Value>], f: impl Fn(&Value) -> String) -> Column {
    col.kind = "large_string";
    let mut offsets = Vec::with_capacity((vals.len() + 1) * 8);
    let mut data = Vec::new();
    offsets.extend_from_slice(&0i64.to_le_bytes());
    for v in vals {
        if let Some(v) = present(*v) {
            data.extend_from_slice(f(v).as_bytes());
        }
        offsets.extend_from_slice(&(data.len() as i64).to_le_bytes());
    }
    col.buffers.push(Some(offsets));
    col.buffers.push(Some(data));
    col
}

/// The columns of a table of rows (objects), fields in the order first seen.
pub fn table(rows: &[Value]) -> Vec<Column> {
    let vals: Vec<Option<&Value>> = rows.iter().map(Some).collect();
    let root = column("", &vals);
    match root.kind {
        "struct" => root.children,
        _ => Vec::new(),
    }
}
