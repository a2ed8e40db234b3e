//! Everything the details panel shows about one slice: identity, timing with self time, args,
//! GPU launch parameters, the launch ↔ kernel links, the enclosing op and the python stack.

use crate::model::{Ns, SliceKind, Trace, NONE};

#[derive(Clone, Debug, PartialEq)]
pub struct SliceDetails {
    pub name: String,
    pub cat: String,
    pub kind: &'static str,
    pub track: String,
    pub start_ns: Ns,
    pub dur_ns: Ns,
    pub self_ns: Ns,
    /// `(key, compact JSON value)` in key order.
    pub args: Vec<(String, String)>,
    pub flops: Option<f64>,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    /// The runtime call that launched this kernel/copy.
    pub launch: Option<u32>,
    /// Innermost `cpu_op` enclosing this slice or, for device work, its launch.
    pub op: Option<u32>,
    /// Device work launched by this runtime call or, for any other host slice, by the runtime
    /// calls nested in it (what "jump to kernel" goes to), in launch order.
    pub kernels: Vec<u32>,
    /// Other ends of flow arrows (`ac2g`, `fwdbwd`, …) from or to this slice.
    pub flows: Vec<u32>,
    /// `python_function` ancestors, innermost first.
    pub python_stack: Vec<String>,
}

/// Duration minus the durations of direct children (which follow it on its track).
pub fn self_time(t: &Trace, i: usize) -> Ns {
    let s = &t.slices;
    if i >= s.len() {
        return 0;
    }
    let e = s.end(i);
    let mut children = 0;
    let mut j = i + 1;
    while j < s.len() && s.track[j] == s.track[i] && s.start[j] < e {
        if s.parent[j] == i as u32 {
            children += s.dur[j];
        }
        j += 1;
    }
    s.dur[i] - children
}

fn ancestors(t: &Trace, i: usize) -> impl Iterator<Item = u32> + '_ {
    let p = &t.slices.parent;
    std::iter::successors(p.get(i).copied().filter(|&x| x != NONE), move |&x| {
        p.get(x as usize).copied().filter(|&y| y != NONE)
    })
    .take(10_000)
}

/// The rows of an args object's text as the details panel lists them, key and value (a string
/// without its quotes); none when the text is not a JSON object. For the model's args
/// ([`Trace::slice_args`]) and for an args object read again from the file
/// ([`Trace::slice_args_in_file`]).
pub fn args_table(text: &str) -> Vec<(String, String)> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(m)) => m
            .into_iter()
            .map(|(k, v)| {
                let text = match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, text)
            })
            .collect(),
        _ => Vec::new(),
    }
}

pub fn details(t: &Trace, i: usize) -> Option<SliceDetails> {
    let s = &t.slices;
    if i >= s.len() {
        return None;
    }
    let args = args_table(&t.slice_args(i));
    let gpu_row = t.gpu.row(i as u32);
    let launch = gpu_row
        .and_then(|r| t.gpu.launch.get(r).copied())
        .filter(|&l| l != NONE);
    // The op and stack of device work are those of the call that launched it.
    let host = launch.map_or(i, |l| l as usize);
    let op = std::iter::once(host as u32)
        .filter(|_| launch.is_some())
        .chain(ancestors(t, host))
        .find(|&a| s.kind.get(a as usize) == Some(&SliceKind::CpuOp));
    let kernels = if gpu_row.is_some() {
        Vec::new()
    } else {
        // The launches in this slice's subtree: its track's slices are sorted by start, so its
        // descendants are the ones right after it that start before it ends.
        let end = s.end(i);
        let track_end = t
            .tracks
            .get(s.track[i] as usize)
            .map_or(i + 1, |tr| (tr.first + tr.count) as usize)
            .min(s.len());
        let launches: Vec<u32> = (i..track_end)
            .take_while(|&k| k == i || s.start[k] < end)
            .filter(|&k| s.kind[k].is_launch())
            .map(|k| k as u32)
            .collect();
        let mut v: Vec<(u32, u32)> = (0..t.gpu.slice.len())
            .filter(|&r| launches.binary_search(&t.gpu.launch[r]).is_ok())
            .map(|r| (t.gpu.launch[r], t.gpu.slice[r]))
            .collect();
        v.sort_unstable();
        v.into_iter().map(|(_, k)| k).collect()
    };
    let mut flows: Vec<u32> = (0..t.flows.from.len())
        .filter_map(|f| {
            let (a, b) = (t.flows.from[f], t.flows.to[f]);
            if a == i as u32 {
                Some(b)
            } else if b == i as u32 {
                Some(a)
            } else {
                None
            }
        })
        .filter(|&x| (x as usize) < s.len())
        .collect();
    flows.sort_unstable();
    flows.dedup();
    let python_stack = ancestors(t, host)
        .filter(|&a| s.kind[a as usize] == SliceKind::PythonFunction)
        .map(|a| t.str(s.name[a as usize]).to_owned())
        .collect();
    let flops = t
        .flops
        .slice
        .binary_search(&(i as u32))
        .ok()
        .and_then(|r| t.flops.flops.get(r).copied());
    Some(SliceDetails {
        name: t.str(s.name[i]).to_owned(),
        cat: t.str(s.cat[i]).to_owned(),
        kind: s.kind[i].label(),
        track: t
            .tracks
            .get(s.track[i] as usize)
            .map(|tr| format!("{} · {}", t.process_label(tr.pid), t.str(tr.name)))
            .unwrap_or_default(),
        start_ns: s.start[i],
        dur_ns: s.dur[i],
        self_ns: self_time(t, i),
        args,
        flops,
        grid: gpu_row.and_then(|r| t.gpu.grid.get(r).copied()),
        block: gpu_row.and_then(|r| t.gpu.block.get(r).copied()),
        launch,
        op,
        kernels,
        flows,
        python_stack,
    })
}

/// Where a slice comes from in the user's code: its Python stack with call lines, module,
/// source line, and forward ↔ backward (see `analysis::{autograd, modules, source}`).
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// torch's stack of the slice (a kernel's: its launch's; in backward: the forward op's),
    /// innermost first.
    pub frames: Vec<crate::analysis::source::Frame>,
    /// `TinyNet_0/Block_1/Linear_7`, from the module frames of the stack.
    pub module: Option<String>,
    /// The line of user code (`model.py:42 forward`).
    pub source: Option<String>,
    /// For a slice in backward (or a kernel launched there): the forward op it differentiates.
    pub forward_op: Option<u32>,
    /// For a forward op: its backward nodes (the `evaluate_function` wrappers), in time order.
    pub backward_nodes: Vec<u32>,
    /// GPU time launched inside those backward nodes.
    pub backward_gpu_ns: Ns,
    /// The stack as text to copy: one frame a line, `file:line` of its call where known.
    pub stack_text: String,
}

pub fn provenance(t: &Trace, ag: &crate::analysis::autograd::Autograd, i: usize) -> Provenance {
    use crate::analysis::source::{frames, source_line, MODULE_PREFIX};
    let s = &t.slices;
    let fr = if i < s.len() {
        frames(t, ag, i)
    } else {
        Vec::new()
    };
    let forward_op = (i < s.len())
        .then(|| ag.anchor_of(t, i))
        .filter(|&a| a != NONE);
    // The module of backward work is its forward op's, even where torch's stack is the engine's
    // (the `evaluate_function` wrapper, gradient accumulation around the node).
    let module_frames = match forward_op {
        Some(f) => frames(t, ag, f as usize),
        None => fr.clone(),
    };
    let mods: Vec<&str> = module_frames
        .iter()
        .rev()
        .filter_map(|f| f.name.strip_prefix(MODULE_PREFIX))
        .collect();
    // A forward op lists its nodes; so does the op that encloses it (aten::linear for addmm).
    let mut backward_nodes: Vec<u32> = Vec::new();
    if forward_op.is_none() && i < s.len() && s.kind[i] == SliceKind::CpuOp {
        let end = s.end(i);
        let mut k = i;
        while k < s.len() && s.track[k] == s.track[i] && (k == i || s.start[k] < end) {
            for b in ag.backward_of(k as u32) {
                let p = s.parent[b as usize];
                if p == NONE || ag.forward_of(p) != Some(k as u32) {
                    backward_nodes.push(b);
                }
            }
            k += 1;
        }
    }
    backward_nodes.sort_unstable();
    backward_nodes.dedup();
    let mut backward_gpu_ns = 0;
    if !backward_nodes.is_empty() {
        let fwd: Vec<u32> = backward_nodes
            .iter()
            .filter_map(|&b| ag.forward_of(b))
            .collect();
        for r in 0..t.gpu.slice.len() {
            let l = t.gpu.launch[r];
            if l != NONE && fwd.contains(&ag.anchor.get(l as usize)) {
                backward_gpu_ns += s.dur[t.gpu.slice[r] as usize];
            }
        }
    }
    let stack_text = fr
        .iter()
        .map(|f| match &f.call_from {
            Some(c) => format!("{}  (called from {c})", f.name),
            None => f.name.clone(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    Provenance {
        module: (!mods.is_empty()).then(|| mods.join("/")),
        source: (i < s.len())
            .then(|| source_line(t, ag, i))
            .flatten()
            .map(|l| l.label()),
        frames: fr,
        forward_op,
        backward_nodes,
        backward_gpu_ns,
        stack_text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::testutil::trace_json;

    #[test]
    fn kernel_links_to_its_launch_op_and_python_stack() {
        let t = trace_json(concat!(
            r#"{"ph":"X","cat":"python_function","name":"model.py(10): forward","pid":1,"tid":1,"ts":0,"dur":100},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":50,"args":{"Input Dims":[[2,3],[3,4]]}},"#,
            r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":5,"args":{"correlation":77}},"#,
            r#"{"ph":"X","cat":"kernel","name":"sgemm","pid":0,"tid":7,"ts":30,"dur":8,"args":{"correlation":77,"device":0,"stream":7,"grid":[4,1,1],"block":[128,1,1]}},"#,
            r#"{"ph":"s","id":77,"pid":1,"tid":1,"ts":20,"cat":"ac2g","name":"ac2g"},"#,
            r#"{"ph":"f","id":77,"pid":0,"tid":7,"ts":30,"cat":"ac2g","name":"ac2g","bp":"e"}"#
        ));
        let find = |n: &str| (0..t.slices.len()).find(|&i| t.str(t.slices.name[i]) == n);
        let (Some(k), Some(l), Some(mm)) =
            (find("sgemm"), find("cudaLaunchKernel"), find("aten::mm"))
        else {
            panic!("slices")
        };
        let Some(d) = details(&t, k) else { panic!() };
        assert_eq!(d.launch, Some(l as u32));
        assert_eq!(d.op, Some(mm as u32));
        assert_eq!(d.grid, Some([4, 1, 1]));
        assert_eq!(d.block, Some([128, 1, 1]));
        assert_eq!(d.python_stack, ["model.py(10): forward"]);
        assert_eq!(d.dur_ns, 8_000);
        let Some(dl) = details(&t, l) else { panic!() };
        assert_eq!(dl.kernels, [k as u32]);
        assert_eq!(dl.op, Some(mm as u32));
        let Some(dm) = details(&t, mm) else { panic!() };
        assert_eq!(dm.self_ns, 45_000);
        // An op's "jump to kernel": the kernels of the launches nested in it; the python frame
        // around the op reaches the same kernel, the kernel itself lists none.
        assert_eq!(dm.kernels, [k as u32]);
        let py = find("model.py(10): forward").map(|p| details(&t, p));
        assert_eq!(py.flatten().map(|d| d.kernels), Some(vec![k as u32]));
        assert_eq!(d.kernels, Vec::<u32>::new());
        assert!(dm
            .args
            .iter()
            .any(|(k, v)| k == "Input Dims" && v == "[[2,3],[3,4]]"));
        assert!(details(&t, 999).is_none());
        // Provenance: the kernel's stack is its launch's, with no module or backward.
        let ag = crate::analysis::autograd::autograd(&t);
        let p = provenance(&t, &ag, k);
        assert_eq!(p.frames.len(), 1);
        assert_eq!(p.source.as_deref(), Some("model.py(10): forward"));
        assert_eq!(p.module, None);
        assert_eq!(p.forward_op, None);
        assert!(p.backward_nodes.is_empty());
        assert_eq!(p.stack_text, "model.py(10): forward");
    }
}
