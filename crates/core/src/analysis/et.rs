//! What an execution trace says on its own (node counts, op mix, collectives), and one node's
//! details with its data dependencies — the inputs, dtypes and strides a Kineto trace lacks.
//!
//! Data dependency (the definition Chakra's converter and PARAM's `et_replay` use): a node depends
//! on the node that last *produced* one of its input tensors — the node with the greatest id below
//! its own, not itself nor one of its ancestors (a parent lists its children's outputs as its own),
//! whose outputs hold the same tensor (`tensor_id`, `storage_id`). Ids are assigned when ops start,
//! so a smaller id started earlier.

use crate::model::exec_trace::{ExecTrace, TensorRef};
use serde::Serialize;

/// How many names the op mix lists.
const OP_MIX_TOP: usize = 15;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameCount {
    pub name: String,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct EtSummary {
    pub schema: String,
    pub pid: i64,
    pub time: String,
    /// Every node, the observer's roots included.
    pub nodes: u64,
    /// Nodes that are ops (roots excluded).
    pub ops: u64,
    /// Distinct `tid` values among ops.
    pub threads: u64,
    /// Ops with an `op_schema` (ATen operators, as opposed to annotations and autograd nodes).
    pub with_op_schema: u64,
    /// Tensor inputs and outputs decoded.
    pub tensors: u64,
    /// Most frequent op names, by count then name.
    pub op_mix: Vec<NameCount>,
    /// `record_param_comms` nodes by collective name.
    pub collectives: Vec<NameCount>,
    /// Warning lines (malformed nodes, truncation).
    pub warnings: Vec<String>,
}

fn counted(mut v: Vec<String>) -> Vec<NameCount> {
    v.sort_unstable();
    let mut out: Vec<NameCount> = Vec::new();
    for name in v {
        match out.last_mut() {
            Some(l) if l.name == name => l.count += 1,
            _ => out.push(NameCount { name, count: 1 }),
        }
    }
    crate::sort::by(&mut out, |a, b| {
        b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name))
    });
    out
}

pub fn summary(et: &ExecTrace) -> EtSummary {
    let n = &et.nodes;
    let ops: Vec<usize> = (0..n.len()).filter(|&i| !et.is_root(i)).collect();
    let mut tids: Vec<i64> = ops.iter().map(|&i| n.tid[i]).collect();
    tids.sort_unstable();
    tids.dedup();
    let mut mix = counted(ops.iter().map(|&i| et.str(n.name[i]).to_owned()).collect());
    mix.truncate(OP_MIX_TOP);
    let coll = counted(
        ops.iter()
            .filter(|&&i| et.is_collective(i))
            .map(|&i| et.collective_name(i).unwrap_or_else(|| "(unnamed)".into()))
            .collect(),
    );
    EtSummary {
        schema: et.schema.clone(),
        pid: et.pid,
        time: et.time.clone(),
        nodes: n.len() as u64,
        ops: ops.len() as u64,
        threads: tids.len() as u64,
        with_op_schema: ops
            .iter()
            .filter(|&&i| !et.str(n.op_schema[i]).is_empty())
            .count() as u64,
        tensors: et.args.tensor.iter().filter(|t| t.is_some()).count() as u64,
        op_mix: mix,
        collectives: coll,
        warnings: et.warnings.lines(),
    }
}

/// Who produced which tensor: (tensor_id, storage_id, node id, node row), sorted.
#[derive(Debug, Clone, Default)]
pub struct Producers {
    outs: Vec<(i64, i64, i64, u32)>,
    ids: Vec<(i64, u32)>,
}

impl Producers {
    pub fn build(et: &ExecTrace) -> Producers {
        let n = &et.nodes;
        let mut outs = Vec::new();
        for i in 0..n.len() {
            let (a, b) = n.outputs[i];
            for t in et.args.tensor[a as usize..b as usize].iter().flatten() {
                outs.push((t.tensor_id, t.storage_id, n.id[i], i as u32));
            }
        }
        outs.sort_unstable();
        outs.dedup();
        Producers {
            outs,
            ids: et.id_index(),
        }
    }

    fn is_ancestor(&self, et: &ExecTrace, anc: usize, node: usize) -> bool {
        let mut cur = node;
        for _ in 0..4096 {
            let Some(p) = ExecTrace::node_by_id(&self.ids, et.nodes.parent[cur]) else {
                return false;
            };
            if p == anc {
                return true;
            }
            cur = p;
        }
        false
    }

    /// The producer row of tensor `t` as seen by node `node`; see the module docs.
    pub fn producer(&self, et: &ExecTrace, node: usize, t: &TensorRef) -> Option<usize> {
        let id = et.nodes.id[node];
        let lo = self
            .outs
            .partition_point(|&(a, b, _, _)| (a, b) < (t.tensor_id, t.storage_id));
        let hi = self
            .outs
            .partition_point(|&(a, b, nid, _)| (a, b, nid) < (t.tensor_id, t.storage_id, id));
        self.outs[lo..hi]
            .iter()
            .rev()
            .map(|&(_, _, _, row)| row as usize)
            .find(|&row| row != node && !self.is_ancestor(et, row, node))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct TensorDetail {
    #[serde(flatten)]
    pub tensor: TensorRef,
    pub device: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArgDetail {
    /// `Tensor(float)`, `Int`, `GenericList[Int,Int]`…
    #[serde(rename = "type")]
    pub ty: String,
    pub shape: String,
    pub strides: String,
    /// Compact JSON of a non-tensor value.
    pub value: String,
    pub tensor: Option<TensorDetail>,
    /// For inputs: the node that produced this tensor (id, name).
    pub producer: Option<(i64, String)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NodeDetails {
    pub id: i64,
    pub name: String,
    pub rf_id: i64,
    /// The enclosing node (id, name).
    pub parent: Option<(i64, String)>,
    pub seq_id: i64,
    pub tid: i64,
    pub scope: i64,
    pub op_schema: String,
    pub kernel_backend: String,
    pub kernel_file: String,
    pub inputs: Vec<ArgDetail>,
    pub outputs: Vec<ArgDetail>,
    /// Attributes without a column (collective parameters…): (name, value).
    pub attrs: Vec<(String, String)>,
}

/// Everything the ET says about node row `node`.
pub fn details(et: &ExecTrace, producers: &Producers, node: usize) -> NodeDetails {
    let n = &et.nodes;
    let s = |id| et.str(id).to_owned();
    let named = |row: usize| (n.id[row], s(n.name[row]));
    let args = |(a, b): (u32, u32), inputs: bool| -> Vec<ArgDetail> {
        (a as usize..b as usize)
            .map(|r| {
                let t = et.args.tensor[r];
                ArgDetail {
                    ty: s(et.args.ty[r]),
                    shape: s(et.args.shape[r]),
                    strides: s(et.args.strides[r]),
                    value: s(et.args.value[r]),
                    tensor: t.map(|t| TensorDetail {
                        tensor: t,
                        device: s(t.device),
                    }),
                    producer: t
                        .filter(|_| inputs)
                        .and_then(|t| producers.producer(et, node, &t))
                        .map(named),
                }
            })
            .collect()
    };
    let (a, b) = n.attrs[node];
    let parent = ExecTrace::node_by_id(&producers.ids, n.parent[node]).map(named);
    NodeDetails {
        id: n.id[node],
        name: s(n.name[node]),
        rf_id: n.rf_id[node],
        parent,
        seq_id: n.seq_id[node],
        tid: n.tid[node],
        scope: n.scope[node],
        op_schema: s(n.op_schema[node]),
        kernel_backend: s(n.kernel_backend[node]),
        kernel_file: s(n.kernel_file[node]),
        inputs: args(n.inputs[node], true),
        outputs: args(n.outputs[node], false),
        attrs: (a as usize..b as usize)
            .map(|r| (s(et.attrs.name[r]), s(et.attrs.value[r])))
            .collect(),
    }
}
