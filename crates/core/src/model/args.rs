//! Every kept `args` object as compact JSON text, in fixed-size blocks.
//!
//! One growing `Vec<u8>` would double past the text's size and copy itself on each growth — on a
//! 1 GB trace that transient alone exceeds the memory budget (wasm linear memory never shrinks).
//! Blocks never move; the slack is at most one block.

/// Bytes per block.
const BLOCK: usize = 1 << 22;

#[derive(Debug, Clone, Default)]
pub struct ArgsArena {
    /// (global offset of the block's first byte, bytes).
    blocks: Vec<(u32, Vec<u8>)>,
    len: u32,
}

impl ArgsArena {
    /// Total bytes stored.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one record written by `write`; returns its (offset, length), or `(0, 0)` once 4 GiB
    /// of args text is stored (the details panel then shows no args; analyses never need them).
    pub fn push(&mut self, size_hint: usize, write: impl FnOnce(&mut Vec<u8>)) -> (u32, u32) {
        if self.len as usize + size_hint.max(1) * 2 >= u32::MAX as usize {
            return (0, 0);
        }
        let need_new = match self.blocks.last() {
            Some((_, b)) => b.len() + size_hint > b.capacity(),
            None => true,
        };
        if need_new {
            let cap = BLOCK.max(size_hint.next_power_of_two());
            self.blocks.push((self.len, Vec::with_capacity(cap)));
        }
        let Some((start, b)) = self.blocks.last_mut() else {
            return (0, 0);
        };
        let before = b.len();
        write(b);
        let off = *start as usize + before;
        let n = b.len() - before;
        if off + n > u32::MAX as usize {
            b.truncate(before);
            return (0, 0);
        }
        self.len = (off + n) as u32;
        (off as u32, n as u32)
    }

    /// The bytes of a record returned by [`ArgsArena::push`].
    pub fn get(&self, (off, len): (u32, u32)) -> Option<&[u8]> {
        let k = self
            .blocks
            .partition_point(|(s, _)| *s <= off)
            .checked_sub(1)?;
        let (start, b) = &self.blocks[k];
        let a = (off - start) as usize;
        b.get(a..a + len as usize)
    }

    pub fn heap_bytes(&self) -> usize {
        self.blocks.iter().map(|(_, b)| b.capacity()).sum::<usize>() + self.blocks.capacity() * 32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_across_block_boundaries() {
        let mut a = ArgsArena::default();
        let big = vec![b'x'; BLOCK - 10];
        let r1 = a.push(big.len(), |o| o.extend_from_slice(&big));
        let r2 = a.push(20, |o| o.extend_from_slice(b"{\"a\":1,\"b\":[1,2,3]}"));
        let huge = vec![b'y'; BLOCK * 2 + 5];
        let r3 = a.push(huge.len(), |o| o.extend_from_slice(&huge));
        assert_eq!(a.get(r1), Some(&big[..]));
        assert_eq!(a.get(r2), Some(&b"{\"a\":1,\"b\":[1,2,3]}"[..]));
        assert_eq!(a.get(r3), Some(&huge[..]));
        assert_eq!(a.len(), big.len() + 19 + huge.len());
    }
}
