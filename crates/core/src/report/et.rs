//! Markdown for an execution trace: what it holds alone, and how it links to its Kineto trace.

use crate::analysis::et::EtSummary;
use crate::analysis::et_link::LinkReport;
use std::fmt::Write;

/// Table cells: a `|` in an op name would split the row.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn et_markdown(file: &str, s: &EtSummary, link: Option<(&str, &LinkReport)>) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Execution trace: {file}\n");
    let _ = writeln!(
        o,
        "- schema {}, pid {}, captured {}\n- {} nodes: {} ops on {} threads, {} with an op schema, {} tensors",
        s.schema, s.pid, s.time, s.nodes, s.ops, s.threads, s.with_op_schema, s.tensors
    );
    o += "\n## Op mix\n\n| op | count |\n|---|---:|\n";
    for r in &s.op_mix {
        let _ = writeln!(o, "| {} | {} |", cell(&r.name), r.count);
    }
    if s.collectives.is_empty() {
        o += "\nNo collectives (`record_param_comms`).\n";
    } else {
        o += "\n## Collectives\n\n| collective | count |\n|---|---:|\n";
        for r in &s.collectives {
            let _ = writeln!(o, "| {} | {} |", cell(&r.name), r.count);
        }
    }
    if let Some((trace, r)) = link {
        let _ = writeln!(
            o,
            "\n## Linked to {trace}\n\n{} of {} ET ops linked to {} Kineto ops (by `rf_id` = `Record function id`).\n",
            r.linked, r.et_ops, r.kineto_ops
        );
        o += "| not linked because | ops |\n|---|---:|\n";
        for (why, n) in [
            (
                "Kineto op has no `Record function id` (PyTorch < 2.4)",
                r.kineto_rf_missing,
            ),
            ("Kineto op's `Record function id` is 0", r.kineto_rf_zero),
            ("Kineto op absent from the ET", r.kineto_not_in_et),
            (
                "Kineto op repeats an id already linked",
                r.kineto_rf_duplicate,
            ),
            ("same id, different name", r.name_mismatch),
            ("same id, time outside its ET parent's op", r.time_mismatch),
            (
                "ET op absent from the Kineto trace (or unlinkable there)",
                r.et_not_in_kineto,
            ),
        ] {
            let _ = writeln!(o, "| {why} | {n} |");
        }
    }
    for w in &s.warnings {
        let _ = writeln!(o, "\n> warning: {w}");
    }
    o
}
