//! What the page shows of a failed load is decided from the core's typed error, not its text:
//! real bad inputs from the committed corpus (`crates/core/tests/fixtures/bad/`, made by
//! `scripts/gen_bad_inputs.py`) go through the core reader, and their errors through
//! `session::Notice`. Expected: a truncation is a warning, a refusal or an unknown format an
//! error naming the file, a cancel nothing.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tracelight_core::ingest::load_bytes;
use tracelight_core::{Error, ErrorKind};
use tracelight_web::session::Notice;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn error_of(name: &str, bytes: &[u8]) -> Error {
    match load_bytes(name, bytes) {
        Err(e) => e,
        Ok(l) => panic!("{name} loaded as {:?}", l.format()),
    }
}

#[wasm_bindgen_test]
fn a_truncated_file_is_a_warning_naming_the_file() {
    let e = error_of(
        "memory_timeline_truncated.json",
        include_bytes!("../../core/tests/fixtures/bad/memory_timeline_truncated.json"),
    );
    assert_eq!(e.kind, ErrorKind::Truncated);
    let n = Notice::of_error(&e).expect("shown");
    assert!(!n.is_error(), "{n:?}");
    assert!(n.text().contains("memory_timeline_truncated.json"), "{n:?}");
}

#[wasm_bindgen_test]
fn a_refused_pickle_and_a_png_are_errors_naming_the_file() {
    let pickle = error_of(
        "pickle_global_os_system.pickle",
        include_bytes!("../../core/tests/fixtures/bad/pickle_global_os_system.pickle"),
    );
    assert!(matches!(pickle.kind, ErrorKind::Refused(_)), "{pickle:?}");
    let png = error_of(
        "png_renamed.json",
        include_bytes!("../../core/tests/fixtures/bad/png_renamed.json"),
    );
    assert!(matches!(png.kind, ErrorKind::Incompatible(_)), "{png:?}");
    for (e, name) in [
        (pickle, "pickle_global_os_system.pickle"),
        (png, "png_renamed.json"),
    ] {
        let n = Notice::of_error(&e).expect("shown");
        assert!(n.is_error(), "{n:?}");
        assert!(n.text().contains(name), "{n:?}");
    }
}

#[wasm_bindgen_test]
fn a_cancel_shows_nothing() {
    let e = Error::new(ErrorKind::Cancelled, 123).in_file("big.json");
    assert_eq!(Notice::of_error(&e), None);
}
