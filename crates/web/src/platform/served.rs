//! Files a local server lists for the page (`tracelight view PATH…`, `?files=MANIFEST`): the
//! manifest names each file and where to fetch it; the page fetches them all into `File`s and
//! opens them as if they had been dropped together, so a run folder, its digests or a set of
//! Flight Recorder dumps get the same run layout, ranks and notices as a drop gives them.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The files of the manifest at `manifest_url` (same origin), fetched in full, in the
/// manifest's order. The manifest is `{"files": [{"name": "rank0.json", "url": "/…"}, …]}`.
/// A failed fetch is an error naming the file, so the page can say which one did not come.
pub async fn files(manifest_url: &str) -> Result<Vec<web_sys::File>, String> {
    let text = fetch_text(manifest_url)
        .await
        .map_err(|e| format!("{manifest_url}: {e}"))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{manifest_url}: not a file list ({e})"))?;
    let Some(list) = v.get("files").and_then(|f| f.as_array()) else {
        return Err(format!("{manifest_url}: no \"files\" list"));
    };
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        let (Some(name), Some(url)) = (
            item.get("name").and_then(|n| n.as_str()),
            item.get("url").and_then(|u| u.as_str()),
        ) else {
            return Err(format!("{manifest_url}: an entry without name and url"));
        };
        let blob = fetch_blob(url).await.map_err(|e| format!("{name}: {e}"))?;
        let parts = js_sys::Array::of1(&blob);
        let file = web_sys::File::new_with_blob_sequence(&parts, name)
            .map_err(|e| format!("{name}: {}", js_text(&e)))?;
        out.push(file);
    }
    Ok(out)
}

async fn fetch_ok(url: &str) -> Result<web_sys::Response, String> {
    let win = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(win.fetch_with_str(url))
        .await
        .map_err(|e| js_text(&e))?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|e| js_text(&e))?;
    if !resp.ok() {
        return Err(format!("HTTP {} {}", resp.status(), resp.status_text()));
    }
    Ok(resp)
}

async fn fetch_text(url: &str) -> Result<String, String> {
    let resp = fetch_ok(url).await?;
    let p = resp.text().map_err(|e| js_text(&e))?;
    let t = JsFuture::from(p).await.map_err(|e| js_text(&e))?;
    t.as_string().ok_or_else(|| "the body is not text".into())
}

/// The body as a `Blob`: the browser keeps a big one on disk, not in the page's heap.
async fn fetch_blob(url: &str) -> Result<JsValue, String> {
    let resp = fetch_ok(url).await?;
    let p = resp.blob().map_err(|e| js_text(&e))?;
    JsFuture::from(p).await.map_err(|e| js_text(&e))
}

fn js_text(e: &JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{e:?}"))
}
