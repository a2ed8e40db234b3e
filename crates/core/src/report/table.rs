//! `key_averages().table()` text, reproduced so it can be pasted where people paste that table:
//! torch's column titles, units (`_format_time`, `_format_memory`, auto-scaled FLOPs), right
//! alignment, 12-wide columns separated by two spaces, the name column as wide as the longest
//! name + 4, and the "Self CPU time total" footer (torch/autograd/profiler_util.py `_build_table`).
//! Device columns appear only when some row has device time, memory columns only when the trace
//! has `[memory]` events of that kind, the FLOPs column when asked for and some row has FLOPs.

use crate::analysis::ops::OpTable;

/// torch `_format_time`: µs in, `1.234ms` / `5.678us` / `1.000s` out.
pub fn format_time_us(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.3}s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.3}ms", us / 1e3)
    } else {
        format!("{us:.3}us")
    }
}

/// torch `_format_memory`.
pub fn format_memory(nbytes: i64) -> String {
    let (kb, mb, gb) = (1024.0, 1024.0 * 1024.0, 1024.0 * 1024.0 * 1024.0);
    let b = nbytes as f64;
    if b.abs() >= gb {
        format!("{:.2} GB", b / gb)
    } else if b.abs() >= mb {
        format!("{:.2} MB", b / mb)
    } else if b.abs() >= kb {
        format!("{:.2} KB", b / kb)
    } else {
        format!("{nbytes} B")
    }
}

fn pct(a: i64, total: i64) -> String {
    if total == 0 {
        return "0.00%".into();
    }
    format!("{:.2}%", 100.0 * a as f64 / total as f64)
}

/// Options of the text table.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableOptions {
    /// Rows to print (after sorting); `None` = all.
    pub row_limit: Option<usize>,
    /// Show CPU memory columns (torch shows them with `profile_memory=True`).
    pub cpu_memory: bool,
    /// Show device memory columns.
    pub device_memory: bool,
    /// Show the FLOPs column (torch shows it with `with_flops=True`, which the trace does not
    /// record).
    pub flops: bool,
}

/// Renders the table in the rows' current order.
pub fn render(table: &OpTable, opts: TableOptions) -> String {
    let rows: Vec<_> = table
        .rows
        .iter()
        .take(opts.row_limit.unwrap_or(usize::MAX))
        .collect();
    let has_device = table.rows.iter().any(|r| r.device_total_ns > 0);
    let min_flops = table
        .rows
        .iter()
        .map(|r| r.flops)
        .filter(|&f| f > 0.0)
        .fold(f64::INFINITY, f64::min);
    let flops = (opts.flops && min_flops.is_finite()).then(|| {
        let headers = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"];
        let l = (min_flops.log10() / 3.0).clamp(0.0, 5.0).floor() as usize;
        (10f64.powi(-3 * l as i32), format!("Total {}", headers[l]))
    });
    let mut heads: Vec<String> = vec![
        "Name".into(),
        "Self CPU %".into(),
        "Self CPU".into(),
        "CPU total %".into(),
        "CPU total".into(),
        "CPU time avg".into(),
    ];
    if has_device {
        heads.extend(["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"].map(String::from));
    }
    if opts.cpu_memory {
        heads.extend(["CPU Mem", "Self CPU Mem"].map(String::from));
    }
    if opts.device_memory {
        heads.extend(["CUDA Mem", "Self CUDA Mem"].map(String::from));
    }
    heads.push("# of Calls".into());
    if table.grouped_by_input_shape {
        heads.push("Input Shapes".into());
    }
    if let Some((_, h)) = &flops {
        heads.push(h.clone());
    }
    let name_w = table
        .rows
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(4)
        .max(4)
        .saturating_add(4)
        .min(MAX_NAME_WIDTH);
    let shapes_w = table
        .rows
        .iter()
        .filter_map(|r| r.input_shapes.as_ref().map(|s| s.len()))
        .max()
        .unwrap_or(12)
        .clamp(12, 76)
        + 4;
    let widths: Vec<usize> = heads
        .iter()
        .enumerate()
        .map(|(k, h)| {
            if k == 0 {
                name_w
            } else if h == "Input Shapes" {
                shapes_w
            } else {
                12
            }
        })
        .collect();
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (c, w) in cells.iter().zip(&widths) {
            s += &format!("{c:>w$}  ", w = *w);
        }
        s.push('\n');
        s
    };
    let dashes: String = widths
        .iter()
        .map(|w| "-".repeat(*w) + "  ")
        .collect::<String>()
        + "\n";
    let mut out = String::new();
    out += &dashes;
    out += &line(&heads);
    out += &dashes;
    let us = |ns: i64| ns as f64 / 1e3;
    for r in rows {
        let mut c = vec![
            truncate(&r.name, name_w),
            pct(r.self_cpu_ns, table.self_cpu_total_ns),
            format_time_us(us(r.self_cpu_ns)),
            pct(r.cpu_total_ns, table.self_cpu_total_ns),
            format_time_us(us(r.cpu_total_ns)),
            format_time_us(r.cpu_avg_ns() / 1e3),
        ];
        if has_device {
            c.push(format_time_us(us(r.self_device_ns)));
            c.push(pct(r.self_device_ns, table.self_device_total_ns));
            c.push(format_time_us(us(r.device_total_ns)));
            c.push(format_time_us(r.device_avg_ns() / 1e3));
        }
        if opts.cpu_memory {
            c.push(format_memory(r.cpu_mem_bytes));
            c.push(format_memory(r.self_cpu_mem_bytes));
        }
        if opts.device_memory {
            c.push(format_memory(r.device_mem_bytes));
            c.push(format_memory(r.self_device_mem_bytes));
        }
        c.push(r.calls.to_string());
        if table.grouped_by_input_shape {
            c.push(truncate(
                r.input_shapes.as_deref().unwrap_or("[]"),
                shapes_w,
            ));
        }
        if let Some((scale, _)) = &flops {
            c.push(if r.flops > 0.0 {
                format!("{:8.3}", r.flops * scale)
            } else {
                "--".into()
            });
        }
        out += &line(&c);
    }
    out += &dashes;
    out += &format!(
        "Self CPU time total: {}\n",
        format_time_us(us(table.self_cpu_total_ns))
    );
    if has_device {
        out += &format!(
            "Self CUDA time total: {}\n",
            format_time_us(us(table.self_device_total_ns))
        );
    }
    out
}

/// Name column cap: torch's `max_name_column_width` (55 by default in `table()`; the generated
/// corpus was printed wider). GPU kernel names run to hundreds of characters, so some cap is needed;
/// 80 keeps every CPU op name of the corpus whole.
pub const MAX_NAME_WIDTH: usize = 80;

/// torch shortens a cell that would fill its column: `name[:w-3] + "..."`.
fn truncate(s: &str, w: usize) -> String {
    if s.len() >= w.saturating_sub(3) {
        let cut = (0..=w.saturating_sub(3))
            .rev()
            .find(|&k| s.is_char_boundary(k))
            .unwrap_or(0);
        format!("{}...", &s[..cut])
    } else {
        s.to_owned()
    }
}
