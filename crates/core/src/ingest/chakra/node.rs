//! One node: scanned into reusable spans over the current window (so a node cut by a slice boundary
//! is simply scanned again), then committed into the columns.

use crate::ingest::json::{parse_int, Cursor, Scan};
use crate::model::exec_trace::{ExecTrace, TensorRef};
use crate::model::{StrId, NO_ID};
use crate::warnings::WarningKind;

/// A raw JSON value in the window: `buf[0]..buf[1]`.
type Span = (usize, usize);

/// Longest non-tensor value kept as text; longer ones are cut with an ellipsis (a 10⁶-element list
/// argument is not worth a megabyte per node).
const MAX_VALUE_TEXT: usize = 1024;

#[derive(Default)]
struct Side {
    values: Vec<Span>,
    shapes: Vec<Span>,
    types: Vec<Span>,
    strides: Vec<Span>,
}

impl Side {
    fn clear(&mut self) {
        self.values.clear();
        self.shapes.clear();
        self.types.clear();
        self.strides.clear();
    }
}

/// Integer node fields, flat (1.0.1) or in `attrs` (1.1.x).
const INTS: [&[u8]; 6] = [
    b"rf_id",
    b"fw_parent",
    b"seq_id",
    b"scope",
    b"tid",
    b"fw_tid",
];
/// String node fields kept in columns.
const STRS: [&[u8]; 3] = [b"op_schema", b"kernel_backend", b"kernel_file"];

#[derive(Default)]
pub(super) struct Scratch {
    id: Option<Span>,
    name: Option<Span>,
    parent: Option<Span>,
    ints: [Option<Span>; 6],
    strs: [Option<Span>; 3],
    ins: Side,
    outs: Side,
    /// (name, type, value) of `attrs` entries without a column.
    extra: Vec<(Span, Span, Span)>,
    /// The first field of the wrong type, for the warning (the node is kept without it).
    problem: Option<&'static str>,
    text: String,
    bytes: Vec<u8>,
}

/// The elements of an array into `out`; `false` (value skipped) when it is not an array.
fn elems(c: &mut Cursor<'_>, out: &mut Vec<Span>) -> Scan<bool> {
    if c.peek()? != b'[' {
        c.value()?;
        return Ok(false);
    }
    c.i += 1;
    loop {
        match c.peek()? {
            b']' => {
                c.i += 1;
                return Ok(true);
            }
            b',' => c.i += 1,
            _ => {
                let s = c.i;
                c.value()?;
                out.push((s, c.i));
            }
        }
    }
}

fn value(c: &mut Cursor<'_>) -> Scan<Span> {
    c.peek()?;
    let s = c.i;
    c.value()?;
    Ok((s, c.i))
}

impl Scratch {
    fn clear(&mut self) {
        self.id = None;
        self.name = None;
        self.parent = None;
        self.ints = [None; 6];
        self.strs = [None; 3];
        self.ins.clear();
        self.outs.clear();
        self.extra.clear();
        self.problem = None;
    }

    /// Scans one node object; the cursor is on its `{`.
    pub(super) fn scan(&mut self, c: &mut Cursor<'_>) -> Scan<()> {
        self.clear();
        c.expect(b'{', "expected a node object")?;
        loop {
            match c.peek()? {
                b'}' => {
                    c.i += 1;
                    return Ok(());
                }
                b',' => c.i += 1,
                _ => {
                    let key = c.string()?;
                    c.expect(b':', "expected ':' after a node key")?;
                    self.field(c, key.bytes)?;
                }
            }
        }
    }

    fn field(&mut self, c: &mut Cursor<'_>, key: &[u8]) -> Scan<()> {
        match key {
            b"id" => self.id = Some(value(c)?),
            b"name" => self.name = Some(value(c)?),
            b"ctrl_deps" | b"parent" => self.parent = Some(value(c)?),
            b"inputs" | b"outputs" => {
                let side = if key == b"inputs" {
                    &mut self.ins
                } else {
                    &mut self.outs
                };
                match c.peek()? {
                    // 1.0.1: the values themselves.
                    b'[' => {
                        elems(c, &mut side.values)?;
                    }
                    b'{' => {
                        c.i += 1;
                        loop {
                            match c.peek()? {
                                b'}' => {
                                    c.i += 1;
                                    break;
                                }
                                b',' => c.i += 1,
                                _ => {
                                    let k = c.string()?;
                                    c.expect(b':', "expected ':' after a key")?;
                                    let out = match k.bytes {
                                        b"values" => &mut side.values,
                                        b"shapes" => &mut side.shapes,
                                        b"types" => &mut side.types,
                                        b"strides" => &mut side.strides,
                                        _ => {
                                            c.value()?;
                                            continue;
                                        }
                                    };
                                    if !elems(c, out)? {
                                        self.problem
                                            .get_or_insert("inputs/outputs field not an array");
                                    }
                                }
                            }
                        }
                    }
                    _ => {
                        c.value()?;
                        self.problem
                            .get_or_insert("`inputs`/`outputs` neither array nor object");
                    }
                }
            }
            b"input_shapes" | b"input_types" | b"input_strides" | b"output_shapes"
            | b"output_types" | b"output_strides" => {
                let side = if key.starts_with(b"input") {
                    &mut self.ins
                } else {
                    &mut self.outs
                };
                let out = if key.ends_with(b"shapes") {
                    &mut side.shapes
                } else if key.ends_with(b"types") {
                    &mut side.types
                } else {
                    &mut side.strides
                };
                if !elems(c, out)? {
                    self.problem
                        .get_or_insert("an input/output list that is not an array");
                }
            }
            b"attrs" => self.attrs(c)?,
            _ => {
                if let Some(k) = INTS.iter().position(|&n| n == key) {
                    self.ints[k] = Some(value(c)?);
                } else if let Some(k) = STRS.iter().position(|&n| n == key) {
                    self.strs[k] = Some(value(c)?);
                } else {
                    c.value()?;
                }
            }
        }
        Ok(())
    }

    fn attrs(&mut self, c: &mut Cursor<'_>) -> Scan<()> {
        if c.peek()? != b'[' {
            c.value()?;
            self.problem.get_or_insert("`attrs` is not an array");
            return Ok(());
        }
        c.i += 1;
        loop {
            match c.peek()? {
                b']' => {
                    c.i += 1;
                    return Ok(());
                }
                b',' => c.i += 1,
                b'{' => {
                    c.i += 1;
                    let (mut name, mut ty, mut val) = (None, None, None);
                    loop {
                        match c.peek()? {
                            b'}' => {
                                c.i += 1;
                                break;
                            }
                            b',' => c.i += 1,
                            _ => {
                                let k = c.string()?;
                                c.expect(b':', "expected ':' after a key")?;
                                let v = value(c)?;
                                match k.bytes {
                                    b"name" => name = Some(v),
                                    b"type" => ty = Some(v),
                                    b"value" => val = Some(v),
                                    _ => {}
                                }
                            }
                        }
                    }
                    let (Some(n), Some(v)) = (name, val) else {
                        self.problem
                            .get_or_insert("an attribute without name or value");
                        continue;
                    };
                    let nb = &c.b[n.0..n.1];
                    let bare = nb.strip_prefix(b"\"").and_then(|s| s.strip_suffix(b"\""));
                    if let Some(k) = bare.and_then(|b| INTS.iter().position(|&x| x == b)) {
                        self.ints[k] = Some(v);
                    } else if let Some(k) = bare.and_then(|b| STRS.iter().position(|&x| x == b)) {
                        self.strs[k] = Some(v);
                    } else {
                        self.extra.push((n, ty.unwrap_or((0, 0)), v));
                    }
                }
                _ => {
                    c.value()?;
                    self.problem
                        .get_or_insert("an attribute that is not an object");
                }
            }
        }
    }

    /// Moves the scanned node into the columns; `at` is its offset for warnings.
    pub(super) fn commit(&mut self, buf: &[u8], et: &mut ExecTrace, at: u64) {
        let int = |s: Option<Span>| s.and_then(|(a, b)| parse_int(&buf[a..b])).unwrap_or(NO_ID);
        let Some(id) = self.id.and_then(|(a, b)| parse_int(&buf[a..b])) else {
            et.warnings.add(WarningKind::MalformedEvent, || {
                format!("node without an integer `id` skipped at byte {at}")
            });
            return;
        };
        if let Some(p) = self.problem {
            et.warnings.add(WarningKind::MalformedEvent, || {
                format!("node {id}: {p} (field ignored) at byte {at}")
            });
        }
        let name = self.string(buf, self.name, et);
        let n = &mut et.nodes;
        n.id.push(id);
        n.name.push(name);
        n.parent.push(int(self.parent));
        let ints = self.ints.map(int);
        n.rf_id.push(ints[0]);
        n.fw_parent.push(ints[1]);
        n.seq_id.push(ints[2]);
        n.scope.push(ints[3]);
        n.tid.push(ints[4]);
        n.fw_tid.push(ints[5]);
        let strs = self.strs;
        let s = strs.map(|x| self.string(buf, x, et));
        let n = &mut et.nodes;
        n.op_schema.push(s[0]);
        n.kernel_backend.push(s[1]);
        n.kernel_file.push(s[2]);
        let ins = self.side(buf, true, et);
        let outs = self.side(buf, false, et);
        et.nodes.inputs.push(ins);
        et.nodes.outputs.push(outs);
        let first = et.attrs.name.len() as u32;
        for k in 0..self.extra.len() {
            let (nm, ty, v) = self.extra[k];
            let nm = self.string(buf, Some(nm), et);
            let ty = self.string(buf, Some(ty), et);
            let v = self.compact(buf, v, et);
            et.attrs.name.push(nm);
            et.attrs.ty.push(ty);
            et.attrs.value.push(v);
        }
        et.nodes.attrs.push((first, et.attrs.name.len() as u32));
    }

    fn side(&mut self, buf: &[u8], inputs: bool, et: &mut ExecTrace) -> (u32, u32) {
        let first = et.args.len() as u32;
        let s = if inputs { &self.ins } else { &self.outs };
        let rows = s.values.len().max(s.shapes.len()).max(s.types.len());
        for r in 0..rows {
            let s = if inputs { &self.ins } else { &self.outs };
            let (v, sh, ty, st) = (
                s.values.get(r).copied(),
                s.shapes.get(r).copied(),
                s.types.get(r).copied(),
                s.strides.get(r).copied(),
            );
            let ty = self.string(buf, ty, et);
            let tensor = match v {
                Some((a, b)) if et.str(ty).starts_with("Tensor(") => {
                    tensor(&buf[a..b], &mut self.text, et)
                }
                _ => None,
            };
            let value = match (v, tensor) {
                (Some(v), None) => self.compact(buf, v, et),
                _ => StrId::EMPTY,
            };
            let shape = sh.map_or(StrId::EMPTY, |x| self.compact(buf, x, et));
            let strides = st.map_or(StrId::EMPTY, |x| self.compact(buf, x, et));
            et.args.ty.push(ty);
            et.args.shape.push(shape);
            et.args.strides.push(strides);
            et.args.value.push(value);
            et.args.tensor.push(tensor);
        }
        (first, et.args.len() as u32)
    }

    /// A JSON string value decoded and interned; anything else as compact text.
    fn string(&mut self, buf: &[u8], s: Option<Span>, et: &mut ExecTrace) -> StrId {
        let Some((a, b)) = s else {
            return StrId::EMPTY;
        };
        let mut c = Cursor::new(&buf[a..b], 0);
        match c.string() {
            Ok(r) => {
                let t = r.decode(&mut self.text);
                et.strings.intern(t)
            }
            Err(_) => self.compact(buf, (a, b), et),
        }
    }

    /// Whitespace outside strings removed, cut at [`MAX_VALUE_TEXT`], interned.
    fn compact(&mut self, buf: &[u8], (a, b): Span, et: &mut ExecTrace) -> StrId {
        let raw = &buf[a..b];
        let out = &mut self.bytes;
        out.clear();
        let (mut in_str, mut esc) = (false, false);
        for &ch in raw {
            if out.len() >= MAX_VALUE_TEXT {
                break;
            }
            if in_str {
                if esc {
                    esc = false;
                } else if ch == b'\\' {
                    esc = true;
                } else if ch == b'"' {
                    in_str = false;
                }
            } else if matches!(ch, b' ' | b'\n' | b'\r' | b'\t') {
                continue;
            } else if ch == b'"' {
                in_str = true;
            }
            out.push(ch);
        }
        if out.len() < MAX_VALUE_TEXT {
            return et.strings.intern(&String::from_utf8_lossy(out));
        }
        let mut s = String::from_utf8_lossy(out).into_owned();
        s.push('…');
        et.strings.intern(&s)
    }
}

/// `[tensor_id, storage_id, offset, numel, itemsize, device]`; `None` for anything else.
fn tensor(raw: &[u8], text: &mut String, et: &mut ExecTrace) -> Option<TensorRef> {
    let mut c = Cursor::new(raw, 0);
    c.expect(b'[', "").ok()?;
    let mut f = [0i64; 5];
    for (k, slot) in f.iter_mut().enumerate() {
        if k > 0 {
            c.expect(b',', "").ok()?;
        }
        c.peek().ok()?;
        *slot = parse_int(c.number().ok()?)?;
    }
    c.expect(b',', "").ok()?;
    let device = c.string().ok()?;
    c.expect(b']', "").ok()?;
    let device = et.strings.intern(device.decode(text));
    Some(TensorRef {
        tensor_id: f[0],
        storage_id: f[1],
        offset: f[2],
        numel: f[3],
        itemsize: f[4],
        device,
    })
}
