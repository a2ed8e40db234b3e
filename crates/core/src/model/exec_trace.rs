//! What a loaded Chakra execution trace is, as tables.
//!
//! One row per node in file order (the observer writes a node when its op *ends*, so parents follow
//! their children); inputs and outputs are rows of one shared [`EtArgs`] table, each node owning a
//! contiguous range; attributes the reader does not keep in a column (collective parameters,
//! `tensor_range`, anything a newer schema adds) go to a shared name/value table. Strings — names,
//! types, shapes, strides, non-tensor values — are interned once.

use super::strings::{Interner, StrId};
use super::trace::NO_ID;
use crate::warnings::Warnings;

/// The process-level and thread-level roots the observer adds above every op
/// (`[pytorch|profiler|execution_trace|process]` / `…|thread]`, `execution_graph` in 2023 files):
/// not ops, never linked.
pub const ROOT_PREFIXES: [&str; 2] = [
    "[pytorch|profiler|execution_trace|",
    "[pytorch|profiler|execution_graph|",
];

/// All nodes, one row each.
#[derive(Debug, Clone, Default)]
pub struct EtNodes {
    pub id: Vec<i64>,
    pub name: Vec<StrId>,
    /// `ctrl_deps` (1.1.x) or `parent` (1.0.1): the enclosing node's id, or [`NO_ID`].
    pub parent: Vec<i64>,
    /// RecordFunction handle; equals Kineto's `Record function id` arg for the same op.
    pub rf_id: Vec<i64>,
    pub fw_parent: Vec<i64>,
    pub seq_id: Vec<i64>,
    pub scope: Vec<i64>,
    pub tid: Vec<i64>,
    pub fw_tid: Vec<i64>,
    pub op_schema: Vec<StrId>,
    pub kernel_backend: Vec<StrId>,
    pub kernel_file: Vec<StrId>,
    /// Rows of [`EtArgs`]: `inputs[i].0 .. inputs[i].1`.
    pub inputs: Vec<(u32, u32)>,
    pub outputs: Vec<(u32, u32)>,
    /// Rows of [`EtAttrs`].
    pub attrs: Vec<(u32, u32)>,
}

impl EtNodes {
    pub fn len(&self) -> usize {
        self.id.len()
    }
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
}

/// A tensor as the observer writes it: `[tensor_id, storage_id, offset, numel, itemsize, device]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct TensorRef {
    pub tensor_id: i64,
    pub storage_id: i64,
    pub offset: i64,
    pub numel: i64,
    pub itemsize: i64,
    #[serde(skip)]
    pub device: StrId,
}

/// One input or output of one node. `shape`, `ty`, `strides` and `value` are compact JSON text
/// (`[256,256]`, `Tensor(float)`, `[256,1]`, `false`); `value` is empty for a tensor, whose fields
/// are in `tensor`.
#[derive(Debug, Clone, Default)]
pub struct EtArgs {
    pub ty: Vec<StrId>,
    pub shape: Vec<StrId>,
    pub strides: Vec<StrId>,
    pub value: Vec<StrId>,
    /// `Some` for a value of type `Tensor(…)` written as the six-element list.
    pub tensor: Vec<Option<TensorRef>>,
}

impl EtArgs {
    pub fn len(&self) -> usize {
        self.ty.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ty.is_empty()
    }
}

/// Attributes without a column of their own: name, declared type, value as compact JSON text.
#[derive(Debug, Clone, Default)]
pub struct EtAttrs {
    pub name: Vec<StrId>,
    pub ty: Vec<StrId>,
    pub value: Vec<StrId>,
}

/// A loaded execution trace.
#[derive(Debug, Clone, Default)]
pub struct ExecTrace {
    pub strings: Interner,
    /// `schema` as written: `1.0.1`, `1.1.0-chakra.0.0.4`, `1.1.1-chakra.0.0.4`.
    pub schema: String,
    pub pid: i64,
    /// `time`: wall-clock text of the capture.
    pub time: String,
    /// `start_ts` / `finish_ts` as written (a steady clock in ms, not comparable with Kineto's
    /// epoch microseconds), or [`NO_ID`].
    pub start_ts: i64,
    pub finish_ts: i64,
    pub nodes: EtNodes,
    pub args: EtArgs,
    pub attrs: EtAttrs,
    pub warnings: Warnings,
    /// Decoded bytes read.
    pub bytes_read: u64,
}

impl ExecTrace {
    pub fn str(&self, id: StrId) -> &str {
        self.strings.resolve(id)
    }

    /// The observer's own root nodes (not ops).
    pub fn is_root(&self, node: usize) -> bool {
        let name = self.str(self.nodes.name[node]);
        ROOT_PREFIXES.iter().any(|p| name.starts_with(p))
    }

    /// The value of an extra attribute by name (`collective_name`, `pg_name`…), as compact JSON.
    pub fn attr(&self, node: usize, name: &str) -> Option<&str> {
        let (a, b) = self.nodes.attrs[node];
        (a as usize..b as usize)
            .find(|&r| self.str(self.attrs.name[r]) == name)
            .map(|r| self.str(self.attrs.value[r]))
    }

    /// PyTorch's c10d records every collective as a `record_param_comms` op carrying its parameters.
    pub fn is_collective(&self, node: usize) -> bool {
        self.str(self.nodes.name[node]) == "record_param_comms"
    }

    /// A collective's name: the `collective_name` attribute (1.1.x), else the first `String` input
    /// (1.0.1 writes the parameters positionally), without quotes.
    pub fn collective_name(&self, node: usize) -> Option<String> {
        if let Some(v) = self.attr(node, "collective_name") {
            return Some(v.trim_matches('"').to_owned());
        }
        let (a, b) = self.nodes.inputs[node];
        (a as usize..b as usize)
            .find(|&r| self.str(self.args.ty[r]) == "String")
            .map(|r| self.str(self.args.value[r]).trim_matches('"').to_owned())
    }

    /// Node rows sorted by id, for [`ExecTrace::node_by_id`].
    pub fn id_index(&self) -> Vec<(i64, u32)> {
        let mut v: Vec<(i64, u32)> = (0..self.nodes.len())
            .map(|i| (self.nodes.id[i], i as u32))
            .collect();
        v.sort_unstable();
        v
    }

    pub fn node_by_id(index: &[(i64, u32)], id: i64) -> Option<usize> {
        if id == NO_ID {
            return None;
        }
        let k = index.partition_point(|&(x, _)| x < id);
        index
            .get(k)
            .filter(|&&(x, _)| x == id)
            .map(|&(_, i)| i as usize)
    }
}
