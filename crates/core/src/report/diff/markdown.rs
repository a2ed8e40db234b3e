//! `tracelight diff A B`: the Markdown a team pastes into a pull request. The verdict first, then
//! the overview with spreads, the step breakdown, kernel categories, and the op and kernel rows
//! that moved the step most (sorted by |Δ per step|, each with its share of the step's change).

use super::rows::{DiffRow, MatchedBy, Status};
use super::{fmt_delta_ns, fmt_ns, Diff, Line, Measure};

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
    if a == 0.0 {
        String::new()
    } else {
        format!("{:+.1}%", 100.0 * (b - a) / a)
    }
}

fn bytes(v: f64) -> String {
    let a = v.abs();
    let sign = if v < 0.0 { "−" } else { "" };
    if a >= (1u64 << 30) as f64 {
        format!("{sign}{:.2} GiB", a / (1u64 << 30) as f64)
    } else {
        format!("{sign}{:.1} MiB", a / (1u64 << 20) as f64)
    }
}

fn time_table(title: &str, lines: &[Line], step_delta: f64) -> String {
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
            format!("{:.0}%", 100.0 * (b - a) / step_delta)
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
    s
}

fn marker(r: &DiffRow) -> String {
    match (r.status, r.matched_by) {
        (Status::Added, _) => "added".into(),
        (Status::Removed, _) => "removed".into(),
        (_, Some(MatchedBy::Parent)) => format!(
            "renamed → {} (via {})",
            cell(r.b_name.as_deref().unwrap_or("")),
            cell(r.via.as_deref().unwrap_or(""))
        ),
        (_, Some(MatchedBy::Shapes)) => format!(
            "shapes → {}",
            r.b_shapes.as_deref().unwrap_or("").replace('|', "\\|")
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
            r.share
                .map(|x| format!("{:.0}%", 100.0 * x))
                .unwrap_or_default(),
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
        "| step min – max | {} – {} | {} – {} | | |\n| step σ | {} | {} | | |\n",
        fmt_ns(a.min),
        fmt_ns(a.max),
        fmt_ns(b.min),
        fmt_ns(b.max),
        fmt_ns(a.stdev),
        fmt_ns(b.stdev)
    );
    for l in &d.figures {
        let (Some(x), Some(y)) = (l.a, l.b) else {
            if l.a.is_some() || l.b.is_some() {
                let f = |v: Option<f64>| v.map_or("—".to_owned(), |v| format!("{v:.3}"));
                s += &format!("| {} | {} | {} | | |\n", l.name, f(l.a), f(l.b));
            }
            continue;
        };
        let row = match l.name.as_str() {
            "gpu_utilization" => format!(
                "| GPU utilization | {:.1}% | {:.1}% | {:+.1} pt | |\n",
                100.0 * x,
                100.0 * y,
                100.0 * (y - x)
            ),
            "mfu" => format!(
                "| MFU | {:.1}% | {:.1}% | {:+.1} pt | |\n",
                100.0 * x,
                100.0 * y,
                100.0 * (y - x)
            ),
            "tflops" => format!(
                "| achieved TFLOPS (window) | {x:.2} | {y:.2} | {:+.2} | {} |\n",
                y - x,
                pct(x, y)
            ),
            "comm_ns" | "exposed_comm_ns" => format!(
                "| {} / step | {} | {} | {} | {} |\n",
                if l.name == "comm_ns" {
                    "communication"
                } else {
                    "exposed communication"
                },
                fmt_ns(x),
                fmt_ns(y),
                fmt_delta_ns(y - x),
                pct(x, y)
            ),
            n => format!(
                "| {} | {} | {} | {} | {} |\n",
                n.trim_end_matches("_bytes").replace('_', " "),
                bytes(x),
                bytes(y),
                if y >= x {
                    format!("+{}", bytes(y - x))
                } else {
                    bytes(y - x)
                },
                pct(x, y)
            ),
        };
        s += &row;
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
