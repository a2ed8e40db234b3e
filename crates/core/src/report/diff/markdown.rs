//! `tracelight diff A B`: the Markdown a team pastes into a pull request. The verdict first, then
//! the overview with spreads, the step breakdown, kernel categories, and the op and kernel rows
//! that moved the step most (sorted by |Δ per step|, each with its share of the step's change).

use super::rows::{DiffRow, MatchedBy, Status};
use super::{fmt_delta_ns, fmt_ns, is_rate, Diff, Line, Measure};
use crate::report::num;

/// How many op and kernel rows the text lists (the JSON has all).
pub const ROWS: usize = 25;

fn cell(name: &str) -> String {
    let mut s: String = name.chars().take(90).collect();
    if name.chars().count() > 90 {
        s.push('…');
    }
    s.replace('|', "\\|")
}

fn pct(a: f64, b: f64) -> String {
    num::change(a, b)
}

/// Bytes in MiB or GiB, signed: `1.20 GiB`, `−12.0 MiB`.
pub fn bytes(v: f64) -> String {
    let a = v.abs();
    let sign = if v < 0.0 { "−" } else { "" };
    if a >= (1u64 << 30) as f64 {
        format!("{sign}{:.2} GiB", a / (1u64 << 30) as f64)
    } else {
        format!("{sign}{:.1} MiB", a / (1u64 << 20) as f64)
    }
}

fn time_table(title: &str, lines: &[Line], step_delta: f64) -> String {
    let note = super::share_note(lines, step_delta);
    let mut s = format!(
        "\n### {title}\n\n| | A | B | Δ | Δ % | share of Δ step |\n|---|---:|---:|---:|---:|---:|\n"
    );
    for l in lines {
        let (a, b) = (l.a.unwrap_or(0.0), l.b.unwrap_or(0.0));
        if a == 0.0 && b == 0.0 {
            continue;
        }
        let share = if step_delta == 0.0 {
            String::new()
        } else {
            num::share((b - a) / step_delta)
        };
        s += &format!(
            "| {} | {} | {} | {} | {} | {share} |\n",
            l.name.replace('_', " "),
            fmt_ns(a),
            fmt_ns(b),
            fmt_delta_ns(b - a),
            pct(a, b)
        );
    }
    if let Some(n) = note {
        s += &format!("\n{n}\n");
    }
    s
}

fn marker(r: &DiffRow) -> String {
    match (r.status, r.matched_by) {
        (Status::Added, _) => "added".into(),
        (Status::Removed, _) => "removed".into(),
        (_, Some(MatchedBy::Parent | MatchedBy::Sizes)) => format!(
            "→ {} ({})",
            cell(r.b_name.as_deref().unwrap_or("")),
            cell(&r.how())
        ),
        (_, Some(MatchedBy::Shapes)) => format!(
            "shapes → {} ({})",
            r.b_shapes.as_deref().unwrap_or("").replace('|', "\\|"),
            r.how()
        ),
        (Status::Same, _) => "same".into(),
        _ => "changed".into(),
    }
}

fn row_table(title: &str, rows: &[DiffRow]) -> String {
    let mut s = format!(
        "\n### {title}\n\n| name | A calls | B calls | A / step | B / step | Δ / step | share of Δ step | |\n|---|---:|---:|---:|---:|---:|---:|---|\n"
    );
    for r in rows.iter().take(ROWS) {
        let mut name = cell(&r.name);
        if let Some(sh) = &r.shapes {
            name += &format!(" {}", sh.replace('|', "\\|"));
        }
        if !r.a_members.is_empty() {
            name += &format!(" (+{} more)", r.a_members.len() - 1);
        }
        s += &format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.a_calls,
            r.b_calls,
            fmt_ns(r.a_step_ns),
            fmt_ns(r.b_step_ns),
            fmt_delta_ns(r.delta_step_ns),
            r.share.map(num::share).unwrap_or_default(),
            marker(r)
        );
    }
    if rows.len() > ROWS {
        s += &format!(
            "\n{} more rows in `tracelight diff --json`.\n",
            rows.len() - ROWS
        );
    }
    s
}

/// A figure's label and its value as text, the same words the page uses.
pub fn figure_label(name: &str) -> &str {
    match name {
        "gpu_utilization" => "GPU utilization",
        "comm_ns" => "communication / step",
        "exposed_comm_ns" => "exposed communication / step",
        "peak_allocated_bytes" => "peak allocated",
        "peak_reserved_bytes" => "peak reserved",
        "flops_per_step" => "FLOPs counted / step",
        "flop_ops_per_step" => "op calls with FLOPs / step",
        "flop_device_share" => "their share of GPU time",
        "tflops" => "achieved FLOPS (step window)",
        "tflops_busy" => "achieved FLOPS (while their kernels run)",
        "mfu" => "MFU",
        "peak_tflops" => "peak used for MFU",
        n => n,
    }
}

/// A figure of [`Diff::figures`] as text (the page calls this too).
pub fn figure_value(name: &str, v: f64) -> String {
    match name {
        "gpu_utilization" | "mfu" | "flop_device_share" => num::share(v),
        "tflops" | "tflops_busy" | "peak_tflops" => num::tflops(v),
        "flops_per_step" => num::flop(v),
        "flop_ops_per_step" => num::count(v),
        "comm_ns" | "exposed_comm_ns" => fmt_ns(v),
        _ => bytes(v),
    }
}

/// The change of a figure: points for shares, a signed time for times, % for the rest.
pub fn figure_delta(name: &str, a: f64, b: f64) -> String {
    match name {
        "gpu_utilization" | "mfu" | "flop_device_share" => num::points(b - a),
        "comm_ns" | "exposed_comm_ns" => format!("{} ({})", fmt_delta_ns(b - a), pct(a, b)),
        "peak_allocated_bytes" | "peak_reserved_bytes" => {
            let d = if b >= a {
                format!("+{}", bytes(b - a))
            } else {
                bytes(b - a)
            };
            format!("{d} ({})", pct(a, b))
        }
        _ => pct(a, b),
    }
}

fn figure_rows(d: &Diff) -> String {
    let mut s = String::new();
    for l in &d.figures {
        if l.a.is_none() && l.b.is_none() {
            continue;
        }
        if l.name == "flops_per_step" && l.a == Some(0.0) && l.b == Some(0.0) {
            continue;
        }
        let f = |v: Option<f64>| v.map_or("—".to_owned(), |v| figure_value(&l.name, v));
        let delta = match (l.a, l.b) {
            (Some(_), Some(_)) if is_rate(&l.name) && !d.rates.comparable => {
                "not comparable ¹".to_owned()
            }
            (Some(x), Some(y)) => figure_delta(&l.name, x, y),
            _ => String::new(),
        };
        s += &format!(
            "| {} | {} | {} | {delta} | |\n",
            figure_label(&l.name),
            f(l.a),
            f(l.b)
        );
    }
    s
}

/// The whole text.
pub fn diff_markdown(d: &Diff) -> String {
    let side = |s: &super::side::Side| {
        let mut t = format!("`{}`", s.label);
        if s.files.len() > 1 {
            t += &format!(" ({} ranks)", s.files.len());
        }
        t += &format!(
            ", {} {}",
            s.step_ns.n,
            if s.has_steps { "steps" } else { "window" }
        );
        if let Some(dev) = &s.device {
            t += &format!(", {dev}");
        }
        t
    };
    let mut s = format!(
        "## Profile diff\n\n**{}**\n\n- A: {}\n- B: {}\n",
        d.verdict,
        side(&d.a),
        side(&d.b)
    );
    if !d.setup_notes.is_empty() {
        s += &format!(
            "\n> **Not like for like** — {}.\n",
            d.setup_notes.join("; ")
        );
    }
    let (a, b) = (&d.a.step_ns, &d.b.step_ns);
    s += "\n| | A | B | Δ | Δ % |\n|---|---:|---:|---:|---:|\n";
    s += &format!(
        "| step time (mean) | {} | {} | {} | {} |\n",
        fmt_ns(a.mean),
        fmt_ns(b.mean),
        fmt_delta_ns(d.step_delta_ns),
        pct(a.mean, b.mean)
    );
    s += &format!(
        "| step median | {} | {} | {} | {} |\n| step min – max | {} – {} | {} – {} | | |\n| step σ | {} | {} | | |\n",
        fmt_ns(a.median),
        fmt_ns(b.median),
        fmt_delta_ns(b.median - a.median),
        pct(a.median, b.median),
        fmt_ns(a.min),
        fmt_ns(a.max),
        fmt_ns(b.min),
        fmt_ns(b.max),
        fmt_ns(a.stdev),
        fmt_ns(b.stdev)
    );
    s += &figure_rows(d);
    if !d.rates.comparable
        && d.figures
            .iter()
            .any(|l| is_rate(&l.name) && l.a.is_some() && l.b.is_some())
    {
        s += &format!(
            "\n¹ FLOP rates not compared: {}. Rates measure only the ops whose FLOPs were counted; compare step time instead.\n",
            d.rates.reasons.join("; ")
        );
    }
    if !d.ranks.is_empty() {
        s += "\n### Ranks (mean step)\n\n| rank | A | B | Δ | Δ % |\n|---:|---:|---:|---:|---:|\n";
        for r in &d.ranks {
            let f = |v: Option<f64>| v.map_or("—".to_owned(), fmt_ns);
            let delta = match (r.a_step_ns, r.b_step_ns) {
                (Some(x), Some(y)) => (fmt_delta_ns(y - x), pct(x, y)),
                _ => (String::new(), String::new()),
            };
            s += &format!(
                "| {} | {} | {} | {} | {} |\n",
                r.rank,
                f(r.a_step_ns),
                f(r.b_step_ns),
                delta.0,
                delta.1
            );
        }
    }
    if !d.breakdown.is_empty() {
        s += &time_table("Step breakdown (per step)", &d.breakdown, d.step_delta_ns);
    }
    s += &time_table(
        "Kernel categories, seed (GPU time per step)",
        &d.seed_categories,
        d.step_delta_ns,
    );
    s += &time_table(
        "Kernel categories, fine (GPU time per step)",
        &d.fine_categories,
        d.step_delta_ns,
    );
    let what = match d.measure {
        Measure::Device => "device time per step",
        Measure::Cpu => "CPU time per step",
    };
    s += &row_table(&format!("Ops ({what}, by impact)"), &d.ops);
    s += &row_table("Kernels (GPU time per step, by impact)", &d.kernels);
    s
}
