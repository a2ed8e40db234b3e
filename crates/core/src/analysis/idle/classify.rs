//! The classifier: a device's idle gaps and, for each, the cause of every part of it (see the
//! parent module's doc for the rules and their order).

use super::host::{claim, window, ByTrack, Host};
use super::{is_data_loading, Cause, DeviceWork, SYNC_SLACK_NS};
use crate::model::{Ns, SliceKind, Trace, TrackKind, NONE};
use rustc_hash::FxHashMap;

/// GPU work of one device: `(start, end, slice)` by start.
pub(super) fn device_work(t: &Trace) -> DeviceWork {
    let s = &t.slices;
    let g = &t.gpu;
    let mut by: FxHashMap<i64, Vec<(Ns, Ns, u32)>> = FxHashMap::default();
    for r in 0..g.slice.len() {
        let i = g.slice[r] as usize;
        if !s.kind[i].is_gpu_work() {
            continue;
        }
        let d = if g.device[r] >= 0 {
            i64::from(g.device[r])
        } else {
            t.tracks[s.track[i] as usize].device.unwrap_or(-1)
        };
        by.entry(d)
            .or_default()
            .push((s.start[i], s.end(i), i as u32));
    }
    let mut v: DeviceWork = by.into_iter().collect();
    for (_, w) in &mut v {
        w.sort_unstable();
    }
    v.sort_unstable_by_key(|x| x.0);
    v
}

/// A device's idle gap inside the window: `[a, b)`, the work before and after it.
pub(super) struct Gap {
    a: Ns,
    b: Ns,
    prev: u32,
    next: u32,
}

pub(super) fn gaps(work: &[(Ns, Ns, u32)], lo: Ns, hi: Ns) -> Vec<Gap> {
    let mut out = Vec::new();
    let mut end = lo;
    let mut last = NONE;
    for &(a, b, i) in work {
        if a > end && a > lo && end < hi {
            out.push(Gap {
                a: end.max(lo),
                b: a.min(hi),
                prev: last,
                next: i,
            });
        }
        if b > end {
            end = b;
            last = i;
        }
    }
    if end < hi {
        out.push(Gap {
            a: end.max(lo),
            b: hi,
            prev: last,
            next: NONE,
        });
    }
    out.retain(|g| g.b > g.a);
    out
}

/// Whether GPU slice `i` is a kernel shorter than its launch call.
fn short_kernel(t: &Trace, i: u32) -> bool {
    if i == NONE || t.slices.kind[i as usize] != SliceKind::Kernel {
        return false;
    }
    let l = t.gpu.row(i).map_or(NONE, |r| t.gpu.launch[r]);
    l != NONE && t.slices.dur[i as usize] < t.slices.dur[l as usize]
}

/// Everything the classifier reads.
pub(super) struct Ctx<'a> {
    pub t: &'a Trace,
    pub h: Host,
}

impl Ctx<'_> {
    /// The causes of one device gap, as sub-intervals with their evidence slice.
    pub fn classify(&self, g: &Gap, out: &mut Vec<(Ns, Ns, Cause, u32)>) {
        let t = self.t;
        let s = &t.slices;
        let h = &self.h;
        let launch = if g.next == NONE {
            NONE
        } else {
            t.gpu.row(g.next).map_or(NONE, |r| t.gpu.launch[r])
        };
        // The queued part: from the launch call's return to the work's start.
        let late_end = if launch == NONE {
            g.b
        } else {
            s.end(launch as usize).clamp(g.a, g.b)
        };
        if late_end < g.b {
            out.push((late_end, g.b, Cause::Queued, g.next));
        }
        if late_end <= g.a {
            return;
        }
        let track = (launch != NONE).then(|| s.track[launch as usize] as usize);
        let per = |sets: &ByTrack| -> Vec<(Ns, Ns)> {
            match track {
                Some(k) => window(&sets.tracks[k], g.a, late_end),
                None => window(sets.all(), g.a, late_end),
            }
        };
        let mut parts: Vec<(Ns, Ns, Cause)> = Vec::new();
        let mut left = claim(
            vec![(g.a, late_end)],
            &[
                (Cause::DataLoading, &h.data),
                (Cause::CollectiveWait, &h.collective),
            ],
            &mut parts,
        );
        let sync = h.sync_at(g.a, SYNC_SLACK_NS);
        if sync.is_some() {
            parts.extend(left.iter().map(|&(a, b)| (a, b, Cause::DeviceSync)));
            left.clear();
        }
        let stretch = short_kernel(t, g.prev) && short_kernel(t, g.next);
        if stretch {
            let mut tmp = Vec::new();
            left = claim(
                left,
                &[(Cause::DeviceSync, &h.sync_union), (Cause::H2dCopy, &h.h2d)],
                &mut tmp,
            );
            parts.extend(tmp);
            parts.extend(left.iter().map(|&(a, b)| (a, b, Cause::LaunchBound)));
            left.clear();
        }
        let (launches, opt, ops, any) =
            (per(&h.launch), per(&h.optimizer), per(&h.ops), per(&h.any));
        left = claim(
            left,
            &[
                (Cause::DeviceSync, &h.sync_union),
                (Cause::H2dCopy, &h.h2d),
                (Cause::LaunchBound, &launches),
                (Cause::Optimizer, &opt),
                (Cause::HostOps, &ops),
                (Cause::Python, &any),
            ],
            &mut parts,
        );
        parts.extend(left.iter().map(|&(a, b)| (a, b, Cause::Unknown)));
        for (a, b, c) in parts {
            let ev = self.evidence(c, a, track, sync, launch, g.next);
            out.push((a, b, c, ev));
        }
    }

    /// The slice that best says what the host was doing over a sub-interval starting at `x`.
    fn evidence(
        &self,
        c: Cause,
        x: Ns,
        track: Option<usize>,
        sync: Option<u32>,
        launch: u32,
        next: u32,
    ) -> u32 {
        let t = self.t;
        let h = &self.h;
        let s = &t.slices;
        // The innermost (or, with `outer`, the outermost) slice covering `x` that passes `test`,
        // on the launching thread first.
        let find = |test: &dyn Fn(&str, SliceKind) -> bool, outer: bool| -> u32 {
            let tracks: Vec<usize> = match track {
                Some(k) => std::iter::once(k)
                    .chain((0..t.tracks.len()).filter(|&j| j != k))
                    .collect(),
                None => (0..t.tracks.len()).collect(),
            };
            for k in tracks {
                if t.tracks[k].kind != TrackKind::Cpu {
                    continue;
                }
                let mut i = h.covering(t, k, x, |_| true);
                let mut found = NONE;
                while i != NONE {
                    let iu = i as usize;
                    if s.start[iu] <= x && s.end(iu) > x && test(t.str(s.name[iu]), s.kind[iu]) {
                        found = i;
                        if !outer {
                            break;
                        }
                    }
                    i = s.parent[iu];
                }
                if found != NONE {
                    return found;
                }
            }
            NONE
        };
        let on_any = |test: &dyn Fn(&str, SliceKind) -> bool| find(test, false);
        match c {
            Cause::DataLoading => find(&|n, k| is_data_loading(n, k), true),
            Cause::CollectiveWait => on_any(&|n, _| {
                n.starts_with("gloo:") || n.starts_with("c10d::") || n.starts_with("nccl:")
            }),
            Cause::DeviceSync => sync
                .unwrap_or_else(|| on_any(&|n, _| n.contains("Synchronize") || n == "aten::item")),
            Cause::H2dCopy => on_any(&|n, k| k.is_launch() && n.contains("Memcpy")),
            Cause::LaunchBound => {
                let l = on_any(&|_, k| k.is_launch());
                if l == NONE {
                    launch
                } else {
                    l
                }
            }
            Cause::Optimizer => {
                // The outermost optimizer slice: `Optimizer.step#AdamW.step`, not its ops.
                let mut i = find(
                    &|n, k| {
                        k != SliceKind::PythonFunction
                            && (n.starts_with("Optimizer.")
                                || n.to_ascii_lowercase().contains("optimizer"))
                    },
                    true,
                );
                if i == NONE {
                    i = on_any(&|n, _| n.to_ascii_lowercase().contains("optimizer"));
                }
                if i == NONE {
                    i = on_any(&|n, _| n.starts_with("aten::_fused_"));
                }
                i
            }
            Cause::HostOps => match track {
                Some(k) => h.covering(t, k, x, |k| k == SliceKind::CpuOp),
                None => on_any(&|_, k| k == SliceKind::CpuOp),
            },
            Cause::Python => {
                let keep = |k: SliceKind| {
                    matches!(k, SliceKind::UserAnnotation | SliceKind::PythonFunction)
                };
                let i = match track {
                    Some(k) => h.covering(t, k, x, keep),
                    None => NONE,
                };
                if i == NONE {
                    on_any(&|n, k| keep(k) && !t.step_rule().is_step(n))
                } else {
                    i
                }
            }
            Cause::Unknown => on_any(&|n, _| !t.step_rule().is_step(n)),
            Cause::Queued | Cause::OtherStream => next,
        }
    }
}
