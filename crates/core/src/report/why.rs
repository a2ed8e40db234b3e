//! The Markdown sections on why the GPU is idle and how far each op is from the hardware (the
//! `tracelight summary` text and the page's download): [`crate::analysis::idle`] and
//! [`crate::analysis::roofline`], laid out.

use super::json::Analysis;
use super::table::format_time_us;
use std::fmt::Write;

fn t(ns: i64) -> String {
    format_time_us(ns as f64 / 1e3)
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_owned(), |v| format!("{:.1}%", 100.0 * v))
}

fn short(name: &str, n: usize) -> String {
    let s = name.replace('|', "\\|");
    if s.chars().count() > n {
        s.chars().take(n - 3).collect::<String>() + "..."
    } else {
        s
    }
}

/// `## Why the GPU is idle`: the headline, the causes with the events that were there, and per
/// step. Empty without GPU work.
pub fn idle_markdown(a: &Analysis) -> String {
    let i = &a.idle;
    let Some(head) = i.headline() else {
        return String::new();
    };
    let mut s = String::new();
    let _ = writeln!(s, "\n## Why the GPU is idle\n\n{head}.\n");
    let _ = writeln!(
        s,
        "| cause | time | share | intervals | what the host was doing |\n|---|---:|---:|---:|---|"
    );
    for c in &i.causes {
        let top: Vec<String> = c
            .top
            .iter()
            .take(3)
            .map(|(n, ns)| format!("{} ({})", short(n, 48), t(*ns)))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {:.1}% | {} | {} |",
            c.cause.short(),
            t(c.ns),
            100.0 * c.share,
            c.intervals,
            top.join(", ")
        );
    }
    if !i.steps.is_empty() {
        let cols: Vec<_> = i.main_causes().map(|c| c.cause).collect();
        let names: Vec<&str> = cols.iter().map(|c| c.short()).collect();
        let _ = writeln!(
            s,
            "\n| step | time | GPU idle | {} |\n|---|---:|---:|{}",
            names.join(" | "),
            "---:|".repeat(cols.len())
        );
        for st in &i.steps {
            let parts: Vec<String> = cols
                .iter()
                .map(|c| {
                    let ns = st.by_cause.iter().find(|x| x.0 == *c).map_or(0, |x| x.1);
                    t(ns)
                })
                .collect();
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                st.name,
                t(st.dur_ns),
                t(st.idle_ns),
                parts.join(" | ")
            );
        }
    }
    s
}

/// `## Roofline`: the device row and the ops with the most device time, with their bound and
/// % of roof. Empty when no op has a known family.
pub fn roofline_markdown(a: &Analysis) -> String {
    let r = &a.roofline;
    if r.ops.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    let _ = writeln!(s, "\n## Roofline\n");
    match &r.device {
        Some(d) => {
            let _ = writeln!(
                s,
                "Peaks of {} ({}; {:.0} GB/s memory bandwidth), each op against its own math unit.\n",
                d.table_name, d.source, d.bandwidth_gbs
            );
        }
        None => {
            let _ = writeln!(
                s,
                "The device is not in the table: achieved figures only, no roof.\n"
            );
        }
    }
    let _ = writeln!(
        s,
        "| op | shapes | device time | FLOP/B | TFLOPS | GB/s | math | bound | % of roof |\n|---|---|---:|---:|---:|---:|---|---|---:|"
    );
    for o in r.ops.iter().take(15) {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.2} | {:.0} | {} {} | {} | {} |",
            short(&o.name, 48),
            short(&o.shapes, 40),
            t(o.device_ns),
            o.intensity
                .map_or_else(|| "–".to_owned(), |x| format!("{x:.1}")),
            o.achieved_tflops,
            o.achieved_gbs,
            o.dtype,
            o.unit.replace('_', " "),
            o.rating.bound.map_or("–", |b| match b {
                crate::analysis::roofline::Bound::Compute => "compute",
                crate::analysis::roofline::Bound::Memory => "memory",
            }),
            pct(o.rating.pct_of_roof)
        );
    }
    s
}
