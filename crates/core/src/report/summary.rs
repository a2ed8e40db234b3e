//! The Markdown summary (`tracelight summary`): what a team pastes into an issue — file facts,
//! step time, GPU utilization, the HTA temporal breakdown, kernel categories, top ops and kernels,
//! memory peak and the recommendations. Every number comes from [`super::json::Analysis`].

use super::facts::Facts;
use super::json::Analysis;
use super::num;
use super::table::{format_memory, format_time_us};
use crate::analysis::steps::CATEGORIES;
use std::fmt::Write;

fn t(ns: i64) -> String {
    format_time_us(ns as f64 / 1e3)
}

fn pct(a: i64, b: i64) -> String {
    if b <= 0 {
        "–".into()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / b as f64)
    }
}

/// The steps' window by the trace's own step annotations: `ProfilerStep`, or a loop's
/// `train_step_N` (which is not a ProfilerStep; the page's idle card names it the same way).
fn step_window(a: &Analysis) -> String {
    match a.steps.first().map(|st| st.name.as_str()) {
        Some(n) if !n.starts_with("ProfilerStep") => {
            let head = n
                .trim_end_matches(|c: char| c.is_ascii_digit())
                .trim_end_matches(['_', '#', '-', ' ']);
            format!("{head}_N")
        }
        _ => "ProfilerStep".into(),
    }
}

/// Markdown for one trace: the facts header, then the analyses.
pub fn markdown(facts: &Facts, a: &Analysis) -> String {
    let mut s = facts.markdown();
    let _ = writeln!(s, "\n## Steps\n");
    if a.steps.is_empty() {
        let _ = writeln!(
            s,
            "No step annotations (ProfilerStep#N, or a loop's train_step_N); the whole trace ({}) is the window.",
            t(a.gpu.window_ns)
        );
    } else {
        let _ = writeln!(
            s,
            "{} steps, mean {}.\n",
            a.steps.len(),
            t(a.step_time_ns())
        );
        let _ = writeln!(s, "| step | time | {} |", CATEGORIES.join(" | "));
        let _ = writeln!(s, "|---|---:|{}", "---:|".repeat(CATEGORIES.len()));
        for st in &a.steps {
            let parts: Vec<String> = st.parts_ns.iter().map(|&p| pct(p, st.dur_ns)).collect();
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                st.name,
                t(st.dur_ns),
                parts.join(" | ")
            );
        }
    }
    let g = &a.gpu;
    let _ = writeln!(s, "\n## GPU\n");
    match g.utilization {
        Some(u) => {
            let _ = writeln!(
                s,
                "- utilization: {:.1}% (busy {} of {} {} window)",
                100.0 * u,
                t(g.busy_ns),
                t(g.window_ns),
                if g.window_from_steps {
                    step_window(a)
                } else {
                    "trace".into()
                }
            );
            let tm = &g.temporal;
            let _ = writeln!(
                s,
                "- temporal breakdown (HTA): span {}, compute {} ({}), non-compute {} ({}), idle {} ({})",
                t(tm.kernel_span_ns),
                t(tm.compute_ns),
                pct(tm.compute_ns, tm.kernel_span_ns),
                t(tm.non_compute_ns),
                pct(tm.non_compute_ns, tm.kernel_span_ns),
                t(tm.idle_ns),
                pct(tm.idle_ns, tm.kernel_span_ns)
            );
            if g.overlap.comm_ns > 0 {
                let _ = writeln!(
                    s,
                    "- communication {}, exposed {}, overlap {:.1}%",
                    t(g.overlap.comm_ns),
                    t(g.overlap.exposed_comm_ns),
                    g.overlap.overlap_pct.unwrap_or(0.0)
                );
            }
            if a.launch.launched > 0 {
                let l = &a.launch;
                let _ = writeln!(
                    s,
                    "- launch delay median {} (queued behind earlier work on the stream {}, stream idle {}), p95 {}; {} kernels shorter than their launch call; {} late launches left the GPU idle {}",
                    t(l.median_delay_ns),
                    t(l.median_queued_ns),
                    t(l.median_ready_ns),
                    t(l.p95_delay_ns),
                    l.short_kernels,
                    l.late_launches,
                    t(l.late_launch_idle_ns)
                );
            }
            if let Some(tf) = a.flops.achieved_tflops_window {
                let _ = write!(s, "- achieved {} over the window", num::tflops(tf));
                if let Some(b) = a.flops.achieved_tflops_device {
                    let _ = write!(s, " ({} while their kernels run)", num::tflops(b));
                }
                if let (Some(m), Some(p)) = (a.flops.mfu, a.flops.peak_tflops) {
                    let _ = write!(s, ", MFU {} of {}", num::share(m), num::tflops(p));
                    if let Some(src) = &a.flops.peak_source {
                        let _ = write!(s, " ({src})");
                    }
                }
                let _ = writeln!(s);
            }
            let total = a.kernels.total_ns;
            let _ = writeln!(s, "\n| category | time | share |\n|---|---:|---:|");
            for (c, v) in &a.categories.seed {
                let _ = writeln!(s, "| {c} | {} | {} |", t(*v), pct(*v, total));
            }
            let _ = writeln!(s, "\n| fine category | time | share |\n|---|---:|---:|");
            for (c, v) in &a.categories.fine {
                let _ = writeln!(s, "| {c} | {} | {} |", t(*v), pct(*v, total));
            }
            let _ = writeln!(s, "\n### Top kernels\n\n| kernel | calls | total | avg | % GPU | category | launched by |\n|---|---:|---:|---:|---:|---|---|");
            for k in a.kernels.rows.iter().take(10) {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {:.1}% | {} | {} |",
                    short(&k.name),
                    k.calls,
                    t(k.total_ns),
                    format_time_us(k.avg_ns / 1e3),
                    k.pct_of_gpu,
                    k.fine_category,
                    k.launching_op.as_deref().unwrap_or("")
                );
            }
        }
        None => {
            let _ = writeln!(s, "No GPU kernels in this trace.");
        }
    }
    s.push_str(&super::why::idle_markdown(a));
    s.push_str(&super::why::roofline_markdown(a));
    let _ = writeln!(s, "\n## Top operators (by self CPU)\n\n| op | calls | self CPU | CPU total | self device | device total |\n|---|---:|---:|---:|---:|---:|");
    for r in a.ops.rows.iter().filter(|r| !r.on_device).take(10) {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            short(&r.name),
            r.calls,
            t(r.self_cpu_ns),
            t(r.cpu_total_ns),
            t(r.self_device_ns),
            t(r.device_total_ns)
        );
    }
    if !a.memory.is_empty() {
        let _ = writeln!(s, "\n## Memory\n\n| device | peak allocated | peak reserved | op at peak |\n|---|---:|---:|---|");
        for m in &a.memory {
            let dev = if m.device_type == 0 {
                "CPU".to_owned()
            } else {
                format!("GPU {}", m.device_id)
            };
            let _ = writeln!(
                s,
                "| {dev} | {} | {} | {} |",
                format_memory(m.peak_allocated_bytes),
                format_memory(m.peak_reserved_bytes),
                m.peak_op.as_deref().unwrap_or("")
            );
        }
    }
    if !a.sync.is_empty() {
        let _ = writeln!(
            s,
            "\n## Sync points\n\n| call | caused by | count | time |\n|---|---|---:|---:|"
        );
        for g in a.sync.iter().take(10) {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                g.name,
                g.op.as_deref().unwrap_or(""),
                g.count,
                t(g.total_ns)
            );
        }
    }
    let _ = writeln!(s, "\n## Recommendations\n");
    if a.recommendations.is_empty() {
        let _ = writeln!(s, "None fired.");
    }
    for r in &a.recommendations {
        let _ = writeln!(s, "- **{}** — {}", r.title, r.detail);
    }
    s
}

/// Kernel names run to hundreds of characters of templates; keep tables readable.
fn short(name: &str) -> String {
    let n = name.replace('|', "\\|");
    if n.chars().count() > 80 {
        n.chars().take(77).collect::<String>() + "..."
    } else {
        n
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::ingest::kineto::read_kineto;

    /// A loop's own `train_step_N` steps with a kernel in each: utilization is over their window,
    /// and the summary names it after them, not "ProfilerStep".
    #[test]
    fn utilization_names_the_window_by_the_traces_own_steps() {
        let ev = |name: &str, cat: &str, pid: u32, tid: u32, ts: u32, dur: u32| {
            format!(
                r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7}}}}"#
            )
        };
        let mut evs = Vec::new();
        for (k, at) in [(1, 0), (2, 1000)] {
            evs.push(ev(
                &format!("train_step_{k}"),
                "user_annotation",
                1,
                1,
                at,
                1000,
            ));
            evs.push(ev("sgemm", "kernel", 0, 7, at + 100, 250));
        }
        let text = format!(r#"{{"traceEvents":[{}]}}"#, evs.join(","));
        let t = read_kineto(text.as_bytes()).unwrap();
        let a = Analysis::of("loop.json", &t);
        let md = markdown(&Facts::of("loop.json", &t), &a);
        let line = md.lines().find(|l| l.starts_with("- utilization")).unwrap();
        // 2 × 250 µs of kernels in the 2,000 µs window of the two steps.
        assert!(line.starts_with("- utilization: 25.0%"), "{line}");
        assert!(line.ends_with("train_step_N window)"), "{line}");
    }
}
