//! A memory snapshot's peak flame graphs as sections (`report::snapshot_wire`'s views send
//! them apart, after the model: the Memory tab shows none before the model is in). A graph of a
//! hundred thousand nodes travels in pieces, so no section grows with the snapshot; every read is
//! checked, and bytes that do not decode are an error (the page then makes a device's graph when
//! it shows it), never a panic.

use crate::analysis::snapshot_flame::{FlameNode, PeakFlame};
use crate::error::Result;
use crate::model::wire::{bad, Get, Wire, PIECE};

/// Every section of the flame graphs `flames`, in order: their count, then each graph's.
pub fn flame_sections(flames: &[PeakFlame]) -> Vec<Vec<u8>> {
    let mut count = Vec::new();
    (flames.len() as u32).put(&mut count);
    let mut out = vec![count];
    for f in flames {
        flame_graph_sections(f, &mut out);
    }
    out
}

/// Flame graph nodes a section: their labels are most of the graph's bytes (26 MB of JSON for
/// the 5.6 M-entry snapshot, 50 ms to decode natively in one piece).
pub(crate) const NODE_PIECE: usize = 1 << 13;

/// A peak flame graph: its size fields, then its nodes [`NODE_PIECE`] a section, then its
/// blocks [`PIECE`] a section.
fn flame_graph_sections(f: &PeakFlame, out: &mut Vec<Vec<u8>>) {
    let mut head = Vec::new();
    f.total_bytes.put(&mut head);
    f.depth.put(&mut head);
    (f.nodes.len() as u32).put(&mut head);
    (f.blocks.len() as u32).put(&mut head);
    out.push(head);
    for part in f.nodes.chunks(NODE_PIECE) {
        let mut sec = Vec::new();
        (part.len() as u32).put(&mut sec);
        for n in part {
            n.label.put(&mut sec);
            n.depth.put(&mut sec);
            n.offset.put(&mut sec);
            n.bytes.put(&mut sec);
            n.parent.put(&mut sec);
        }
        out.push(sec);
    }
    for part in f.blocks.chunks(PIECE) {
        let mut sec = Vec::new();
        (part.len() as u32).put(&mut sec);
        for &(addr, size, node) in part {
            addr.put(&mut sec);
            size.put(&mut sec);
            node.put(&mut sec);
        }
        out.push(sec);
    }
}

/// What the next flame graph section holds.
enum FlameWant {
    Count,
    Head,
    /// Nodes, then blocks, still to come.
    Nodes(usize, usize),
    Blocks(usize),
}

/// Takes [`flame_sections`] one at a time.
pub struct FlameDecoder {
    want: FlameWant,
    /// Graphs whose head has not come yet.
    left: usize,
    flames: Vec<PeakFlame>,
}

impl Default for FlameDecoder {
    fn default() -> Self {
        FlameDecoder {
            want: FlameWant::Count,
            left: 0,
            flames: Vec::new(),
        }
    }
}

impl FlameDecoder {
    /// Whether every section has come.
    pub fn complete(&self) -> bool {
        matches!(self.want, FlameWant::Head) && self.left == 0
    }

    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        match &mut self.want {
            FlameWant::Count => {
                let mut g = Get::new(section);
                self.left = u32::get(&mut g)? as usize;
                g.done()?;
                self.want = FlameWant::Head;
            }
            FlameWant::Head => {
                if self.left == 0 {
                    return Err(bad("a section after the last flame graph"));
                }
                let mut g = Get::new(section);
                let total_bytes = u64::get(&mut g)?;
                let depth = u32::get(&mut g)?;
                let nodes = u32::get(&mut g)? as usize;
                let blocks = u32::get(&mut g)? as usize;
                g.done()?;
                self.left -= 1;
                self.flames.push(PeakFlame {
                    nodes: Vec::new(),
                    total_bytes,
                    depth,
                    blocks: Vec::new(),
                });
                self.next(nodes, blocks);
            }
            FlameWant::Nodes(nodes, blocks) => {
                let (nodes, blocks) = (*nodes, *blocks);
                let mut g = Get::new(section);
                let n = g.count()?;
                if n == 0 || n > nodes {
                    return Err(bad("flame graph nodes that do not fit their graph"));
                }
                let Some(f) = self.flames.last_mut() else {
                    return Err(bad("flame graph nodes before their graph"));
                };
                for _ in 0..n {
                    f.nodes.push(FlameNode {
                        label: g.string()?,
                        depth: u32::get(&mut g)?,
                        offset: u64::get(&mut g)?,
                        bytes: u64::get(&mut g)?,
                        parent: u32::get(&mut g)?,
                    });
                }
                g.done()?;
                self.next(nodes - n, blocks);
            }
            FlameWant::Blocks(blocks) => {
                let blocks = *blocks;
                let mut g = Get::new(section);
                let n = g.count()?;
                if n == 0 || n > blocks {
                    return Err(bad("flame graph blocks that do not fit their graph"));
                }
                let Some(f) = self.flames.last_mut() else {
                    return Err(bad("flame graph blocks before their graph"));
                };
                for _ in 0..n {
                    f.blocks
                        .push((u64::get(&mut g)?, u64::get(&mut g)?, u32::get(&mut g)?));
                }
                g.done()?;
                self.next(0, blocks - n);
            }
        }
        Ok(())
    }

    /// After a graph's section: what comes next, `nodes` and `blocks` still to come.
    fn next(&mut self, nodes: usize, blocks: usize) {
        self.want = if nodes > 0 {
            FlameWant::Nodes(nodes, blocks)
        } else if blocks > 0 {
            FlameWant::Blocks(blocks)
        } else {
            FlameWant::Head
        };
    }

    pub fn finish(self) -> Result<Vec<PeakFlame>> {
        if !self.complete() {
            return Err(bad("flame graphs cut short"));
        }
        Ok(self.flames)
    }
}
