//! What a hovered or pinned band is: size, address, when, and its stack.

use crate::session::memory::Source;
use crate::session::{Content, SessionRef};
use tracelight_core::analysis::memory_chart::{category_name, BandKind, MemoryChart, XUnit};
use tracelight_core::analysis::snapshot::top_frames;
use tracelight_core::model::time::format_duration;
use tracelight_core::report::memory::format_bytes;

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Detail {
    pub title: String,
    pub facts: Vec<String>,
    pub frames: Vec<String>,
}

fn when(chart: &MemoryChart, x: i64) -> String {
    match chart.unit {
        XUnit::Ns => format!("+{}", format_duration(x - chart.x_range.0)),
        XUnit::Index => format!("entry #{x}"),
    }
}

/// Describes band `band` of `chart`; `at` is the x under the pointer (for values that change).
pub fn describe(
    session: &SessionRef,
    src: &Source,
    chart: &MemoryChart,
    band: usize,
    at: i64,
) -> Option<Detail> {
    let b = chart.bands.get(band)?;
    let (lo, hi) = b
        .at(at)
        .or_else(|| Some((*b.lo.first()?, *b.hi.first()?)))?;
    let mut d = Detail::default();
    match &b.kind {
        BandKind::Alloc {
            addr,
            size,
            stack,
            alloc_index,
            free_index,
        } => {
            d.title = format!("{} allocation at 0x{addr:x}", format_bytes(*size));
            d.facts.push(format!("{size} bytes"));
            d.facts.push(match alloc_index {
                Some(i) => format!("allocated at entry #{i} ({})", when(chart, b.start())),
                None => "allocated before the trace began".into(),
            });
            d.facts.push(match free_index {
                Some(i) => format!("freed at entry #{i} ({})", when(chart, b.end)),
                None => "still allocated at the end".into(),
            });
            d.facts.push(format!(
                "stacked at {} – {}",
                format_bytes(lo),
                format_bytes(hi)
            ));
            if let Some(Content::Snapshot(s)) = session.files.get(src.file).map(|f| &f.content) {
                d.frames = if s.pending {
                    vec!["(the stack comes with the snapshot's model, still on its way)".into()]
                } else {
                    top_frames(s, *stack)
                };
                if d.frames.is_empty() {
                    d.frames.push("(no stack recorded)".into());
                }
            }
        }
        BandKind::Summarized { count } => {
            d.title = format!(
                "{} in smaller allocations ({count} not drawn one by one)",
                format_bytes(hi.saturating_sub(lo))
            );
            d.facts.push(format!("at {}", when(chart, at)));
        }
        BandKind::Category(c) => {
            d.title = format!("{}: {}", category_name(*c), format_bytes(hi - lo));
            d.facts
                .push(format!("total {} at {}", format_bytes(hi), when(chart, at)));
        }
        BandKind::Allocated => {
            d.title = format!("allocated: {}", format_bytes(hi));
            d.facts.push(format!("at {}", when(chart, at)));
            if let Some(l) = chart.lines.first() {
                let k = l.x.partition_point(|&v| v <= at).saturating_sub(1);
                if let Some(r) = l.y.get(k) {
                    d.facts.push(format!("reserved: {}", format_bytes(*r)));
                }
            }
        }
    }
    Some(d)
}
