//! Idle time per stream: where the whole device is idle it takes the device's causes; where
//! another stream of the device is busy it is a collective wait (an NCCL kernel there) or
//! other stream.

use super::{add, ByCause, Cause, DeviceWork, StreamIdle};
use crate::analysis::gpu::{hta_kernel_type, HtaKernelType};
use crate::analysis::intervals::{clip, intersect, subtract, total, union};
use crate::model::{Ns, SliceKind, Trace};
use rustc_hash::FxHashMap;

/// Per stream: its idle time where the device is idle takes the device's causes; where another
/// stream is busy it is a collective wait (NCCL there) or other stream.
pub(super) fn stream_idle(
    t: &Trace,
    work: &DeviceWork,
    dev_parts: &FxHashMap<i64, Vec<(Ns, Ns, Cause)>>,
    lo: Ns,
    hi: Ns,
) -> Vec<StreamIdle> {
    let s = &t.slices;
    let mut out = Vec::new();
    let comm = t.slice_name_test(|n| hta_kernel_type(n) == HtaKernelType::Communication);
    for (d, w) in work {
        let mut streams: Vec<u32> = w.iter().map(|x| s.track[x.2 as usize]).collect();
        streams.sort_unstable();
        streams.dedup();
        let parts = dev_parts.get(d).map_or(&[][..], |v| &v[..]);
        for &tr in &streams {
            let own = union(
                w.iter()
                    .filter(|x| s.track[x.2 as usize] == tr)
                    .map(|x| (x.0, x.1))
                    .collect(),
            );
            let idle = subtract(&[(lo, hi)], &clip(&own, lo, hi));
            let others = |nccl: bool| {
                union(
                    w.iter()
                        .filter(|x| {
                            s.track[x.2 as usize] != tr
                                && (comm[x.2 as usize] && s.kind[x.2 as usize] == SliceKind::Kernel)
                                    == nccl
                        })
                        .map(|x| (x.0, x.1))
                        .collect(),
                )
            };
            let mut by: ByCause = Vec::new();
            let nccl = intersect(&idle, &others(true));
            add(&mut by, Cause::CollectiveWait, total(&nccl));
            let rest = subtract(&idle, &nccl);
            let busy = intersect(&rest, &others(false));
            add(&mut by, Cause::OtherStream, total(&busy));
            let dev_idle = subtract(&rest, &busy);
            // The device's causes over the part where the whole device is idle.
            let mut k = 0;
            for &(a, b) in &dev_idle {
                while k < parts.len() && parts[k].1 <= a {
                    k += 1;
                }
                let mut j = k;
                while j < parts.len() && parts[j].0 < b {
                    let ov = parts[j].1.min(b) - parts[j].0.max(a);
                    add(&mut by, parts[j].2, ov);
                    j += 1;
                }
            }
            let tk = &t.tracks[tr as usize];
            out.push(StreamIdle {
                device: *d,
                stream: tk.stream.unwrap_or(-1),
                idle_ns: total(&idle),
                by_cause: by,
            });
        }
    }
    crate::sort::by_key(&mut out, |x| (x.device, x.stream));
    out
}
