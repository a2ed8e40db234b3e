//! Push-based gzip inflation: compressed slices in, decoded slices out, memory bounded by one slice.
//!
//! The decoder is always fed the same pieces (aligned to multiples of [`PIECE`] in the compressed
//! stream, whatever the caller's slices), so what comes out before a corrupt byte, and therefore
//! which error is reported, never depends on how the file was sliced.

use flate2::write::MultiGzDecoder;
use std::io::Write;

/// Compressed input is fed in pieces of this size so one piece's output stays small.
const PIECE: usize = 64 * 1024;

pub struct Gunzip {
    dec: MultiGzDecoder<Vec<u8>>,
    /// Compressed bytes not yet fed: always less than one piece.
    pending: Vec<u8>,
}

impl Default for Gunzip {
    fn default() -> Self {
        Gunzip {
            dec: MultiGzDecoder::new(Vec::new()),
            pending: Vec::new(),
        }
    }
}

impl Gunzip {
    /// Inflates `data`, handing decoded bytes to `sink` as they come.
    pub fn push(
        &mut self,
        data: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> crate::Result<()>,
    ) -> Result<(), GzError> {
        let mut data = data;
        if !self.pending.is_empty() {
            let take = (PIECE - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() < PIECE {
                return Ok(());
            }
            let piece = std::mem::take(&mut self.pending);
            self.feed(&piece, sink)?;
        }
        let mut pieces = data.chunks_exact(PIECE);
        for piece in &mut pieces {
            self.feed(piece, sink)?;
        }
        self.pending.extend_from_slice(pieces.remainder());
        Ok(())
    }

    /// Inflates one piece. What was decoded before a corrupt byte reaches `sink` first, so an error
    /// in the decoded stream that comes earlier is the one reported.
    fn feed(
        &mut self,
        piece: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> crate::Result<()>,
    ) -> Result<(), GzError> {
        let w = self.dec.write_all(piece);
        let out = self.dec.get_mut();
        if !out.is_empty() {
            let r = sink(out);
            out.clear();
            r.map_err(GzError::Downstream)?;
        }
        w.map_err(|e| GzError::Corrupt(e.to_string()))
    }

    /// Flushes the decoder; a stream cut short reports `Truncated`.
    pub fn finish(
        mut self,
        sink: &mut dyn FnMut(&[u8]) -> crate::Result<()>,
    ) -> Result<(), GzError> {
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            self.feed(&rest, sink)?;
        }
        let fin = self.dec.try_finish();
        let out = self.dec.get_mut();
        if !out.is_empty() {
            sink(out).map_err(GzError::Downstream)?;
            out.clear();
        }
        fin.map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof
                || e.to_string().contains("unexpected end")
            {
                GzError::Truncated
            } else {
                GzError::Corrupt(e.to_string())
            }
        })
    }
}

pub enum GzError {
    Corrupt(String),
    Truncated,
    Downstream(crate::Error),
}
