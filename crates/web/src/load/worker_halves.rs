//! The analyses of a trace split between two reader workers (`js/shards.js`): the helper (worker
//! 1, its shard sent) reads the model back from the sections the page decoded and computes the
//! steps-and-time half ([`Paced`]), while the merging worker computes the tables half
//! ([`Tables`]) and then joins the two. One after the other they took ~1.7 s of worker 0 alone
//! after a 1 GB trace's model while worker 1 sat idle. Number-only exports, as
//! [`super::worker`]'s.

use super::worker::{hand_out, with};
use tracelight_core::report::analysis::{Analysis, Paced, Tables};
use tracelight_core::report::analysis_wire;
use wasm_bindgen::prelude::*;

/// The helper, its model read back ([`super::worker::tl_reload_end`]): the steps-and-time half,
/// as one section of JSON in the output, and the model let go. 1, or -1 without a model.
#[wasm_bindgen]
pub fn tl_analyze_paced() -> i32 {
    with(|s| {
        let Some(t) = s.trace.take() else { return -1 };
        let half = Paced::of(&t);
        drop(t);
        s.out = vec![half.to_json()];
        1
    })
}

/// The merging worker, instead of [`super::worker::tl_analyze`] while the helper computes the
/// other half: the tables half, kept with the file name in the first `len` input bytes. 0, or -1
/// without a model.
#[wasm_bindgen]
pub fn tl_analyze_tables(len: u32) -> i32 {
    with(|s| {
        s.parts = None;
        let name = String::from_utf8_lossy(s.input.get(..len as usize).unwrap_or_default());
        let Some(t) = s.trace.as_ref() else { return -1 };
        let tables = Tables::of(t);
        s.tables = Some((name.into_owned(), tables));
        0
    })
}

/// The merging worker, once the helper's half came: its JSON in the first `len` input bytes (0:
/// none came, and bytes that do not read back are none too: the half is computed here then). The
/// whole analysis, the model let go; how many sections it takes, as `tl_analyze`.
#[wasm_bindgen]
pub fn tl_analyze_join(len: u32) -> i32 {
    with(|s| {
        let (Some(t), Some((name, tables))) = (s.trace.take(), s.tables.take()) else {
            return -1;
        };
        let half = match s.input.get(..len as usize) {
            Some(b) if !b.is_empty() => Paced::from_json(b).ok(),
            _ => None,
        };
        let half = half.unwrap_or_else(|| Paced::of(&t));
        let a = Analysis::from_parts(&name, &t, half, tables);
        drop(t);
        hand_out(s, analysis_wire::sections(&a))
    })
}
