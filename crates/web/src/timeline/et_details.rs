//! The selected op's node in the session's Chakra execution trace (linked by `rf_id` =
//! `Record function id`, see `tracelight_core::analysis::et_link`): its op schema and every input
//! and output with the dtype, shape and strides the Kineto trace lacks, and for each input tensor
//! the node that produced it.

use super::tlstate::Ctx;
use leptos::prelude::*;
use tracelight_core::analysis::et::{details, ArgDetail};

fn row(side: &'static str, k: usize, a: &ArgDetail) -> impl IntoView {
    let what = match (&a.tensor, &a.producer) {
        (Some(t), Some((id, name))) => format!(
            "tensor {} (storage {}, {}) ← {name} #{id}",
            t.tensor.tensor_id, t.tensor.storage_id, t.device
        ),
        (Some(t), None) => format!(
            "tensor {} (storage {}, {})",
            t.tensor.tensor_id, t.tensor.storage_id, t.device
        ),
        (None, _) => a.value.clone(),
    };
    view! {
        <tr>
            <th>{format!("{side} {k}")}</th>
            <td>{a.ty.clone()}</td>
            <td>{a.shape.clone()}</td>
            <td>{a.strides.clone()}</td>
            <td>{what}</td>
        </tr>
    }
}

/// Nothing when the session has no ET for this trace or the op is not in it.
pub fn et_section(c: &Ctx, slice: u32) -> Option<impl IntoView> {
    let (f, node) = c.session.et_node(c.file, slice)?;
    let d = details(&f.et, &f.producers, node);
    let rows = d
        .inputs
        .iter()
        .enumerate()
        .map(|(k, a)| row("in", k, a))
        .chain(d.outputs.iter().enumerate().map(|(k, a)| row("out", k, a)))
        .collect_view();
    let attrs = d
        .attrs
        .iter()
        .map(|(k, v)| view! { <dt>{k.clone()}</dt><dd>{v.clone()}</dd> })
        .collect_view();
    Some(view! {
        <h4>"Execution trace"</h4>
        <dl data-testid="details-et">
            <dt>"Node"</dt>
            <dd data-testid="details-et-node" data-id=d.id.to_string()>{format!("#{} (rf_id {}, seq {}, tid {})", d.id, d.rf_id, d.seq_id, d.tid)}</dd>
            {(!d.op_schema.is_empty()).then(|| view! { <dt>"Schema"</dt><dd data-testid="details-et-schema">{d.op_schema.clone()}</dd> })}
            {attrs}
        </dl>
        <table class="tl-args" data-testid="details-et-args">
            <thead><tr><th></th><th>"type"</th><th>"shape"</th><th>"strides"</th><th>"value / tensor ← producer"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    })
}
