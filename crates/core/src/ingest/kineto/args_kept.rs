//! Which of a slice's args entries the builder stores in the model's args text, and which it
//! leaves in the file (with a mark that says where the whole object is).

use super::columns::is_columnar;
use super::event::{key, ArgPair, Ev};
use crate::model::args::ArgsArena;
use crate::model::SliceKind;

/// The args keys without a column that an analysis reads from a slice (`Trace::slice_arg_int`,
/// `slice_arg_str`, `slice_args_stored`): kept in the model when the others are left in the
/// file. `tests/args_in_file.rs` checks that every analysis gives the same answer either way.
const ANALYSED_KEYS: &[&[u8]] = &[
    crate::analysis::autograd::SEQUENCE_NUMBER.as_bytes(),
    crate::analysis::autograd::FWD_THREAD_ID.as_bytes(),
    crate::analysis::source::CALL_FROM.as_bytes(),
    crate::analysis::graphs::GRAPH_ID.as_bytes(),
    crate::analysis::graphs::GRAPH_NODE_ID.as_bytes(),
    crate::model::arg_keys::bytes::STREAM,
    // Stride, padding and dilation of a convolution, a cast's dtype: flops and the roofline.
    b"Concrete Inputs",
];

/// A slice whose args have this key is a collective: all its args are kept (the collectives'
/// matching reads several, `analysis/comm_calls.rs`), and collectives are few.
const COLLECTIVE_KEY: &[u8] = b"Collective name";

/// What a builder keeps of each slice's args.
pub(super) struct ArgsKept {
    /// Slices keep only the args keys an analysis reads ([`ANALYSED_KEYS`]; every key of a
    /// collective's), and where the whole object lies in the file for the rest
    /// ([`super::KinetoReader::leave_args_in_file`]).
    pub in_file: bool,
    /// Each entry's class for the event being stored, reused from event to event. Allocated with
    /// the builder: made on the first slice instead, it sat between the columns' growing blocks,
    /// and the page's merging worker's wasm memory grew from 0.43x to 0.46x the file (1 GB).
    classes: Vec<ArgClass>,
}

impl Default for ArgsKept {
    fn default() -> Self {
        ArgsKept {
            in_file: false,
            classes: Vec::with_capacity(64),
        }
    }
}

/// What [`ArgsKept::store`] does with an args entry, decided once per entry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ArgClass {
    /// Its value is in a column already: not stored.
    Column,
    /// An analysis reads it ([`ANALYSED_KEYS`]): stored.
    Analysed,
    /// Stored unless the args are left in the file.
    Other,
}

/// The class of an args entry: `id` is its key's [`key`] number (the typed keys found by the
/// scanner; only `stream` among them is one an analysis reads), `name` the key, `value` its value.
#[inline]
fn classify(id: usize, name: &[u8], value: &[u8], kind: Option<SliceKind>) -> ArgClass {
    if id != key::NONE {
        if kind.is_some_and(|k| is_columnar(id, value, k)) {
            ArgClass::Column
        } else if id == key::STREAM {
            ArgClass::Analysed
        } else {
            ArgClass::Other
        }
    } else if ANALYSED_KEYS.contains(&name) {
        ArgClass::Analysed
    } else {
        ArgClass::Other
    }
}

impl ArgsKept {
    /// Appends the args object in compact form, built from the key/value spans the scanner
    /// recorded (values are copied as written).
    /// Keys whose values live in columns are left out: `Trace::slice_args` puts them back, and the
    /// args text (a third of a trace's bytes) shrinks by half. With [`ArgsKept::in_file`], a
    /// slice's keys that no analysis reads are left out too, and the record says where the whole
    /// object is (`at`: the event's offset in the stream).
    pub(super) fn store(
        &mut self,
        arena: &mut ArgsArena,
        ev: &Ev<'_>,
        buf: &[u8],
        pairs: &[ArgPair],
        kind: Option<SliceKind>,
        at: u64,
    ) -> (u32, u32) {
        let Some(a) = ev.args else { return (0, 0) };
        let span = u32::try_from(a.len())
            .ok()
            .filter(|_| ev.args_rel != u32::MAX)
            .map(|len| (at + u64::from(ev.args_rel), len));
        let class = &mut self.classes;
        class.clear();
        // What is left out when the args stay in the file (a key reference, the value, a comma
        // each), and whether the slice is a collective.
        let (mut others, mut collective) = (0usize, false);
        for p in pairs {
            class.push(classify(p[4], &buf[p[0]..p[1]], &buf[p[2]..p[3]], kind));
            if class.last() == Some(&ArgClass::Other) {
                collective |= p[4] == key::NONE && &buf[p[0]..p[1]] == COLLECTIVE_KEY;
                others += 4 + p[3] - p[2];
            }
        }
        // Only where that saves memory: what is left out must outweigh the mark that says where
        // it is.
        let left = self.in_file
            && kind.is_some()
            && span.is_some()
            && !collective
            && others > crate::model::args::FILE_MARK;
        let keep = |c: ArgClass| match c {
            ArgClass::Column => false,
            ArgClass::Analysed => true,
            ArgClass::Other => !left,
        };
        let file = span.filter(|_| left);
        if file.is_none() && !class.iter().any(|&c| keep(c)) {
            return (0, 0);
        }
        let kept = pairs
            .iter()
            .zip(class.iter())
            .filter(|&(_, &c)| keep(c))
            .map(|(p, _)| (&buf[p[0]..p[1]], &buf[p[2]..p[3]]));
        arena.push_object_from(a.len(), kept, file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::kineto::event::key_of;
    use crate::model::arg_keys;

    /// The class as it was decided from the key's bytes alone (before the scanner's key numbers):
    /// the reference [`classify`] must agree with.
    fn by_name(name: &[u8], value: &[u8], kind: Option<SliceKind>) -> ArgClass {
        use arg_keys::bytes as k;
        let columnar = |kind: SliceKind| match name {
            k::EXTERNAL_ID | k::EXTERNAL_ID_LOWER | k::RECORD_FUNCTION_ID | k::CORRELATION => {
                crate::ingest::json::parse_int(value).is_some()
            }
            k::INPUT_DIMS | k::INPUT_DIMS_LOWER | k::INPUT_TYPE => true,
            k::DEVICE | k::STREAM => kind.is_gpu_work(),
            k::GRID
            | k::BLOCK
            | k::REGISTERS
            | k::SHARED_MEMORY
            | k::BLOCKS_PER_SM
            | k::WARPS_PER_SM
            | k::OCCUPANCY => kind == SliceKind::Kernel,
            k::BYTES | k::BANDWIDTH => matches!(kind, SliceKind::Memcpy | SliceKind::Memset),
            _ => false,
        };
        if kind.is_some_and(columnar) {
            ArgClass::Column
        } else if ANALYSED_KEYS.contains(&name) {
            ArgClass::Analysed
        } else {
            ArgClass::Other
        }
    }

    #[test]
    fn the_scanners_key_numbers_give_the_classes_the_keys_give() {
        let mut names: Vec<&[u8]> = arg_keys::ALL.iter().map(|k| k.as_bytes()).collect();
        names.extend_from_slice(ANALYSED_KEYS);
        names.extend_from_slice(&[
            COLLECTIVE_KEY,
            b"Ev Idx",
            b"Python id",
            b"",
            b"Stream",
            b"bytes ",
            b"cbid",
            b"kernel",
        ]);
        let kinds = [
            None,
            Some(SliceKind::CpuOp),
            Some(SliceKind::GpuAnnotation),
            Some(SliceKind::Kernel),
            Some(SliceKind::Memcpy),
            Some(SliceKind::Memset),
            Some(SliceKind::Runtime),
        ];
        let values: [&[u8]; 5] = [b"12", b"-3", b"\"7\"", b"[1, 2, 3]", b"1.5"];
        let mut checked = 0;
        for name in &names {
            let id = key_of(name);
            // Every typed key has a number of its own; no other key has one.
            assert_eq!(
                id != key::NONE,
                arg_keys::ALL.iter().any(|k| k.as_bytes() == *name),
                "{:?}",
                String::from_utf8_lossy(name)
            );
            for kind in kinds {
                for value in values {
                    assert!(
                        classify(id, name, value, kind) == by_name(name, value, kind),
                        "{:?} = {:?} in {kind:?}",
                        String::from_utf8_lossy(name),
                        String::from_utf8_lossy(value)
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000);
        // The typed keys are all different numbers.
        let mut ids: Vec<usize> = arg_keys::ALL.iter().map(|k| key_of(k.as_bytes())).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), arg_keys::ALL.len());
    }
}
