//! The bytes a file was read from, kept to read a range of them again later: the reader workers
//! leave a slice's display-only args in the file (core's `KinetoReader::leave_args_in_file`), and
//! the details panel reads them from here when a slice is selected.
//!
//! A `Blob` is not `Send`, and the session that owns a trace lives in signals that require it: the
//! blob stays in this thread's registry and the session holds a [`Source`], which removes it
//! when dropped. The blob is the `File` picked (the OS reads it again, nothing is held in memory)
//! or, for a `.gz`, its inflated bytes the workers read (the browser's blob storage holds them,
//! outside the tab's wasm memory).

use js_sys::Uint8Array;
use std::cell::RefCell;
use wasm_bindgen_futures::JsFuture;

thread_local!(static BLOBS: RefCell<Vec<(u64, web_sys::Blob)>> = const { RefCell::new(Vec::new()) });
thread_local!(static NEXT: std::cell::Cell<u64> = const { std::cell::Cell::new(1) });

/// A blob in the registry; dropping it lets the blob go.
#[derive(Debug)]
pub struct Source(u64);

impl Source {
    pub fn keep(blob: &web_sys::Blob) -> Source {
        let id = NEXT.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        BLOBS.with(|b| b.borrow_mut().push((id, blob.clone())));
        Source(id)
    }

    /// Bytes `[offset, offset + len)` of the blob, read again; an error names what failed.
    pub async fn read(&self, offset: u64, len: u32) -> Result<Vec<u8>, String> {
        let blob = BLOBS
            .with(|b| {
                b.borrow()
                    .iter()
                    .find(|(id, _)| *id == self.0)
                    .map(|(_, b)| b.clone())
            })
            .ok_or_else(|| "the file is no longer open".to_owned())?;
        let end = offset + u64::from(len);
        if end as f64 > blob.size() {
            return Err(format!(
                "byte {end} is past the file's end ({} bytes)",
                blob.size()
            ));
        }
        let part = blob
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .map_err(|e| format!("{e:?}"))?;
        let buf = JsFuture::from(part.array_buffer()).await.map_err(|e| {
            e.as_string().unwrap_or_else(|| {
                "the file could not be read again (was it moved or changed?)".into()
            })
        })?;
        Ok(Uint8Array::new(&buf).to_vec())
    }
}

impl Drop for Source {
    fn drop(&mut self) {
        let id = self.0;
        BLOBS.with(|b| b.borrow_mut().retain(|(k, _)| *k != id));
    }
}
