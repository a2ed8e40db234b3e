//! Every slice of a trace as Arrow columns, straight from core's columnar model (`Trace::slices`,
//! one `Vec` per field): times and ids are the model's own vectors as little-endian bytes; names,
//! categories, kinds and threads are dictionary columns whose indices are the interned ids,
//! renumbered to the strings the column uses. No row is ever an object, on either side.

use crate::columns::Column;
use tracelight_core::model::{SliceKind, StrId, Trace, NONE, NO_ID};

fn int_column(name: &str, vals: impl ExactSizeIterator<Item = Option<i64>>) -> Column {
    let len = vals.len();
    let mut data = Vec::with_capacity(len * 8);
    let mut valid = vec![0u8; len.div_ceil(8)];
    let mut nulls = 0;
    for (k, v) in vals.enumerate() {
        match v {
            Some(x) => {
                data.extend_from_slice(&x.to_le_bytes());
                valid[k / 8] |= 1 << (k % 8);
            }
            None => {
                data.extend_from_slice(&0i64.to_le_bytes());
                nulls += 1;
            }
        }
    }
    Column {
        name: name.to_owned(),
        kind: "int64",
        len,
        nulls,
        buffers: vec![(nulls > 0).then_some(valid), Some(data)],
        children: Vec::new(),
    }
}

/// A dictionary column: per row a key (`None`: null), its text from `text`; the dictionary holds
/// each key used, in order of first use.
fn dict_column<'a>(
    name: &str,
    keys: impl ExactSizeIterator<Item = Option<u32>>,
    text: impl Fn(u32) -> &'a str,
) -> Column {
    let len = keys.len();
    let mut remap: Vec<u32> = Vec::new();
    let mut offsets: Vec<u8> = 0i64.to_le_bytes().to_vec();
    let mut bytes: Vec<u8> = Vec::new();
    let mut indices = Vec::with_capacity(len * 4);
    let mut valid = vec![0u8; len.div_ceil(8)];
    let mut nulls = 0;
    let mut used = 0u32;
    for (k, key) in keys.enumerate() {
        let Some(key) = key else {
            indices.extend_from_slice(&0i32.to_le_bytes());
            nulls += 1;
            continue;
        };
        let at = key as usize;
        if at >= remap.len() {
            remap.resize(at + 1, u32::MAX);
        }
        if remap[at] == u32::MAX {
            remap[at] = used;
            used += 1;
            bytes.extend_from_slice(text(key).as_bytes());
            offsets.extend_from_slice(&(bytes.len() as i64).to_le_bytes());
        }
        indices.extend_from_slice(&(remap[at] as i32).to_le_bytes());
        valid[k / 8] |= 1 << (k % 8);
    }
    let dictionary = Column {
        name: String::new(),
        kind: "large_string",
        len: used as usize,
        nulls: 0,
        buffers: vec![None, Some(offsets), Some(bytes)],
        children: Vec::new(),
    };
    Column {
        name: name.to_owned(),
        kind: "dictionary",
        len,
        nulls,
        buffers: vec![(nulls > 0).then_some(valid), Some(indices)],
        children: vec![dictionary],
    }
}

/// The columns of [`Trace::slices`], one row per slice in the model's order (by track, then
/// start), with the GPU slices' device and stream (null elsewhere).
pub fn slices(t: &Trace) -> Vec<Column> {
    let s = &t.slices;
    let n = s.len();
    let string = |id: u32| t.strings.resolve(StrId(id));
    let id = |v: &tracelight_core::model::Ids| -> Vec<Option<i64>> {
        v.iter().map(|x| (x != NO_ID).then_some(x)).collect()
    };
    let (mut device, mut stream) = (vec![None; n], vec![None; n]);
    for (k, &i) in t.gpu.slice.iter().enumerate() {
        if let Some(d) = device.get_mut(i as usize) {
            *d = t.gpu.device.get(k).map(|&x| i64::from(x));
        }
        if let Some(st) = stream.get_mut(i as usize) {
            *st = t.gpu.stream.get(k).map(|&x| i64::from(x));
        }
    }
    let track_name = |tr: u32| t.tracks.get(tr as usize).map(|x| x.name.0);
    vec![
        dict_column("name", s.name.iter().map(|x| Some(x.0)), string),
        dict_column("cat", s.cat.iter().map(|x| Some(x.0)), string),
        dict_column("kind", s.kind.iter().map(|&k| Some(k as u32)), |k| {
            kind_label(k)
        }),
        int_column("ts_ns", s.start.iter().map(|&x| Some(x))),
        int_column("dur_ns", s.dur.iter().map(|&x| Some(x))),
        int_column("track", s.track.iter().map(|&x| Some(i64::from(x)))),
        dict_column("thread", s.track.iter().map(|&x| track_name(x)), string),
        int_column("depth", s.depth.iter().map(|&x| Some(i64::from(x)))),
        int_column(
            "parent",
            s.parent
                .iter()
                .map(|&x| (x != NONE).then_some(i64::from(x))),
        ),
        int_column("correlation", id(&s.correlation).into_iter()),
        int_column("external_id", id(&s.external_id).into_iter()),
        int_column("device", device.into_iter()),
        int_column("stream", stream.into_iter()),
        dict_column(
            "input_dims",
            s.input_dims
                .iter()
                .map(|x| (!string(x.0).is_empty()).then_some(x.0)),
            string,
        ),
    ]
}

/// The label of a `SliceKind` by its discriminant (the order of the enum).
fn kind_label(k: u32) -> &'static str {
    use SliceKind as K;
    const ALL: [K; 10] = [
        K::CpuOp,
        K::UserAnnotation,
        K::PythonFunction,
        K::Runtime,
        K::Driver,
        K::Kernel,
        K::Memcpy,
        K::Memset,
        K::GpuAnnotation,
        K::Other,
    ];
    ALL.iter()
        .find(|&&x| x as u32 == k)
        .map_or("other", |x| x.label())
}
