//! Helpers shared by the integration tests that compare two readers' models.

use tracelight_core::model::{StrId, Trace};

/// Two models are the same: every slice column, string, stored args text, and (through their
/// `Debug` form) every other table, the metadata and the warnings.
pub fn assert_same_model(a: &Trace, b: &Trace, what: &str) {
    let (x, y) = (&a.slices, &b.slices);
    assert!(
        x.start == y.start && x.dur == y.dur && x.track == y.track,
        "{what}: slices"
    );
    assert!(
        x.name == y.name && x.cat == y.cat && x.kind == y.kind,
        "{what}: names"
    );
    assert!(
        x.depth == y.depth && x.parent == y.parent,
        "{what}: nesting"
    );
    assert!(
        x.external_id == y.external_id && x.correlation == y.correlation && x.rf_id == y.rf_id,
        "{what}: ids"
    );
    assert!(
        x.input_dims == y.input_dims && x.input_types == y.input_types && x.args == y.args,
        "{what}: args"
    );
    assert_eq!(a.strings.len(), b.strings.len(), "{what}: strings");
    for i in 0..a.strings.len() as u32 {
        assert_eq!(a.str(StrId(i)), b.str(StrId(i)), "{what}: string {i}");
    }
    for i in 0..x.len() {
        assert_eq!(
            a.slice_args_stored(i),
            b.slice_args_stored(i),
            "{what}: args of slice {i}"
        );
        assert_eq!(
            a.slice_args_in_file(i),
            b.slice_args_in_file(i),
            "{what}: args in the file of slice {i}"
        );
    }
    let parts = |t: &Trace| {
        [
            ("meta", format!("{:?}", t.meta)),
            ("processes", format!("{:?}", t.processes)),
            ("tracks", format!("{:?}", t.tracks)),
            ("gpu", format!("{:?}", t.gpu)),
            ("flops", format!("{:?}", t.flops)),
            ("instants", format!("{:?}", t.instants)),
            ("memory", format!("{:?}", t.memory)),
            ("counters", format!("{:?}", t.counters)),
            ("flows", format!("{:?}", t.flows)),
            ("warnings", format!("{:?}", t.warnings)),
            ("counts", format!("{} {}", t.event_count, t.bytes_read)),
        ]
    };
    for ((part, x), (_, y)) in parts(a).iter().zip(parts(b).iter()) {
        assert!(x == y, "{what}: {part} differ:\n{x}\n{y}");
    }
}
