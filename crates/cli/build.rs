//! Embeds the app's single-file build (`dist-single/tracelight.html`, made by
//! `trunk build --release && node scripts/single_file.mjs`) for `tracelight view`, when it exists.
//! Without it the CLI still builds (every report works); `view` then says how to get the page.
//! `TRACELIGHT_VIEWER_HTML=PATH` names another file to embed.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=TRACELIGHT_VIEWER_HTML");
    let default =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../dist-single/tracelight.html");
    let path = std::env::var_os("TRACELIGHT_VIEWER_HTML").map_or(default, PathBuf::from);
    // A missing file is watched too: Cargo reruns this script once it appears.
    println!("cargo:rerun-if-changed={}", path.display());
    let code = match path.canonicalize() {
        Ok(p) if p.is_file() => format!(
            "/// The app's single-file build, embedded at build time.\npub const VIEWER: Option<&[u8]> = Some(include_bytes!({:?}));\n",
            p.display().to_string()
        ),
        _ => "/// None: the app's single-file build was absent when this binary was built.\npub const VIEWER: Option<&[u8]> = None;\n".to_owned(),
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("viewer.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=writing {}: {e}", out.display());
        std::process::exit(1);
    }
}
