//! Push-based gzip inflation: compressed slices in, decoded slices out, memory bounded by one slice.

use flate2::write::MultiGzDecoder;
use std::io::Write;

/// Compressed input is fed in pieces of this size so one piece's output stays small.
const PIECE: usize = 64 * 1024;

pub struct Gunzip {
    dec: MultiGzDecoder<Vec<u8>>,
}

impl Default for Gunzip {
    fn default() -> Self {
        Gunzip {
            dec: MultiGzDecoder::new(Vec::new()),
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
        for piece in data.chunks(PIECE) {
            self.dec
                .write_all(piece)
                .map_err(|e| GzError::Corrupt(e.to_string()))?;
            let out = self.dec.get_mut();
            if !out.is_empty() {
                let r = sink(out);
                out.clear();
                r.map_err(GzError::Downstream)?;
            }
        }
        Ok(())
    }

    /// Flushes the decoder; a stream cut short reports `Truncated`.
    pub fn finish(
        mut self,
        sink: &mut dyn FnMut(&[u8]) -> crate::Result<()>,
    ) -> Result<(), GzError> {
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
