//! Data the single-file build inlines into the page (`scripts/single_file.mjs`): non-executing
//! `<script type="application/octet-stream">` blocks of base64, read back as a `File`. A page
//! opened from `file://` can fetch nothing, so the demo trace travels this way.

use wasm_bindgen::JsValue;

/// The bytes of the data block with id `id`, as a `File` named `name`; `None` when the page has
/// no such block (a normal build) or its text is not base64.
pub fn file(id: &str, name: &str) -> Option<web_sys::File> {
    let win = web_sys::window()?;
    let text = win.document()?.get_element_by_id(id)?.text_content()?;
    let bin = win.atob(text.trim()).ok()?;
    // `atob` gives one char per byte (U+0000..U+00FF).
    let bytes: Vec<u8> = bin.chars().map(|c| c as u32 as u8).collect();
    let arr = js_sys::Uint8Array::from(bytes.as_slice());
    web_sys::File::new_with_u8_array_sequence(&js_sys::Array::of1(&JsValue::from(arr)), name).ok()
}
