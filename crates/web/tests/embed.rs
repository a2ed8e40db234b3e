//! The embedding protocol's rules (`embed::protocol`) and message reading (`embed::decode`), value
//! by value, in headless Chromium. Expected values are worked out by hand in the comments.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use js_sys::{ArrayBuffer, Object, Reflect, Uint8Array};
use tracelight_web::embed::decode::{decode, is_ignored, Kind, Message, Payload};
use tracelight_web::embed::protocol::{
    byte_total, embed_mode, file_name, occurrence, window_ns, Origins, Reject, MAX_TEXT,
};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// `{k: v, …}` as a JS object.
fn obj(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in pairs {
        Reflect::set(&o, &JsValue::from_str(k), v).unwrap();
    }
    o.into()
}

#[wasm_bindgen_test]
fn perfetto_view_percentage_pads_by_half_the_rest_on_each_side() {
    // 1 s .. 2 s at 50 %: padding (1 - 0.5) / 2 of 1 s = 0.25 s each side.
    assert_eq!(
        window_ns(1.0, 2.0, Some(0.5), (0, 1)),
        Ok((750_000_000, 2_250_000_000))
    );
    // 100 %: exactly the range.
    assert_eq!(
        window_ns(1.0, 2.0, Some(1.0), (0, 1)),
        Ok((1_000_000_000, 2_000_000_000))
    );
    // Out of (0, 1]: Perfetto's fallback, 50 %.
    assert_eq!(
        window_ns(1.0, 2.0, Some(0.0), (0, 1)),
        window_ns(1.0, 2.0, Some(0.5), (0, 1))
    );
}

#[wasm_bindgen_test]
fn without_a_percentage_the_zoom_is_kept_when_the_range_fits_in_half() {
    // Window 10 s wide; a 1 s range fits in half of it: centred at 5.5 s, still 10 s wide.
    assert_eq!(
        window_ns(5.0, 6.0, None, (0, 10_000_000_000)),
        Ok((500_000_000, 10_500_000_000))
    );
    // A 4 s range in a 6 s window does not: padded by twice its length on each side (fills 1/5).
    assert_eq!(
        window_ns(4.0, 8.0, None, (0, 6_000_000_000)),
        Ok((-4_000_000_000, 16_000_000_000))
    );
}

#[wasm_bindgen_test]
fn bad_ranges_are_refused() {
    for (a, b) in [
        (2.0, 1.0),
        (f64::NAN, 1.0),
        (0.0, f64::INFINITY),
        (1e300, 1e301),
        (-5e9, 0.0),
    ] {
        assert_eq!(
            window_ns(a, b, None, (0, 1)),
            Err(Reject::BadField),
            "{a} {b}"
        );
    }
}

#[wasm_bindgen_test]
fn origins_list_narrows_and_junk_never_widens() {
    let none = Origins::parse(None);
    assert!(none.allows("https://a.example", true));
    assert!(!none.allows("https://a.example", false));
    let list = Origins::parse(Some("https://Wiki.Example.org/, http://127.0.0.1:8080"));
    assert!(list.allows("https://wiki.example.org", false));
    assert!(list.allows("http://127.0.0.1:8080", true));
    assert!(!list.allows("http://127.0.0.1:8081", true));
    let junk = Origins::parse(Some("*, javascript:alert(1), https://a.example/path"));
    assert!(!junk.allows("https://a.example", true));
    assert!(!junk.allows("*", true));
}

#[wasm_bindgen_test]
fn numbers_and_names() {
    assert_eq!(occurrence(None), Ok(0));
    assert_eq!(occurrence(Some(3.0)), Ok(2));
    for bad in [0.0, -1.0, 1.5, f64::NAN, 1e20] {
        assert_eq!(occurrence(Some(bad)), Err(Reject::BadField));
    }
    assert_eq!(byte_total(Some(0.0)), Ok(None));
    assert_eq!(byte_total(Some(1234.0)), Ok(Some(1234)));
    assert_eq!(byte_total(Some(-1.0)), Err(Reject::BadField));
    assert_eq!(file_name(Some("a/b\n.json"), Some("t")), "a b .json");
    assert_eq!(file_name(None, Some("The demo")), "The demo");
    assert_eq!(file_name(Some("  "), None), "posted trace");
}

#[wasm_bindgen_test]
fn decodes_perfettos_messages() {
    assert!(matches!(
        decode(&JsValue::from_str("PING")),
        Ok(Message::Ping)
    ));
    assert!(matches!(
        decode(&JsValue::from_str("PONG")),
        Err(Reject::UnknownShape)
    ));
    let buf = ArrayBuffer::new(16);
    let m = obj(&[(
        "perfetto",
        obj(&[
            ("buffer", buf.into()),
            ("title", "t".into()),
            ("fileName", "f.json".into()),
            ("keepApiOpen", true.into()),
        ]),
    )]);
    let Ok(Message::Open(o)) = decode(&m) else {
        panic!("a buffer message")
    };
    assert!(matches!(o.payload, Payload::Buffer(_)));
    assert_eq!(o.name, "f.json");
    assert!(o.keep_api_open);
    // A typed array is as good as its buffer; a bare ArrayBuffer is Perfetto's oldest form.
    let view = obj(&[(
        "perfetto",
        obj(&[("buffer", Uint8Array::new_with_length(4).into())]),
    )]);
    assert!(matches!(decode(&view), Ok(Message::Open(_))));
    assert!(matches!(
        decode(&ArrayBuffer::new(4).into()),
        Ok(Message::Open(_))
    ));
    let range = obj(&[(
        "perfetto",
        obj(&[("timeStart", 1.5.into()), ("timeEnd", 2.into())]),
    )]);
    assert!(matches!(decode(&range), Ok(Message::Window(a, b, None)) if a == 1.5 && b == 2.0));
    assert!(is_ignored(&obj(&[("perfettoIgnore", true.into())])));
    assert!(!is_ignored(&obj(&[("perfettoIgnore", "yes".into())])));
}

#[wasm_bindgen_test]
fn decodes_commands_and_refuses_bad_fields() {
    let cmd = |pairs: &[(&str, JsValue)]| obj(&[("tracelight", obj(pairs))]);
    let m = decode(&cmd(&[
        ("command", "reveal".into()),
        ("kind", "kernel".into()),
        ("name", "k".into()),
        ("occurrence", 2.into()),
    ]));
    assert!(matches!(m, Ok(Message::Reveal(Kind::Kernel, ref n, 1)) if n == "k"));
    assert!(matches!(
        decode(&cmd(&[("command", "open-tab".into()), ("tab", 5.into())])),
        Err(Reject::BadField)
    ));
    let long = "x".repeat(MAX_TEXT as usize + 1);
    assert!(matches!(
        decode(&cmd(&[
            ("command", "reveal".into()),
            ("name", long.as_str().into())
        ])),
        Err(Reject::TooLong)
    ));
    assert!(matches!(
        decode(&cmd(&[("command", "nope".into())])),
        Err(Reject::UnknownShape)
    ));
    for junk in [
        JsValue::NULL,
        42.into(),
        obj(&[]),
        obj(&[("perfetto", 5.into())]),
    ] {
        assert!(decode(&junk).is_err());
    }
    let bad_buffer = obj(&[("perfetto", obj(&[("buffer", "bytes".into())]))]);
    assert!(matches!(decode(&bad_buffer), Err(Reject::BadField)));
}

#[wasm_bindgen_test]
fn embed_mode_from_the_query_or_perfettos_hash_route() {
    assert!(embed_mode("?embed=1", ""));
    assert!(embed_mode("?url=x&mode=embedded", ""));
    assert!(embed_mode("", "#!/viewer?hideSidebar=true"));
    assert!(!embed_mode("?embed=0", "#tab=timeline"));
    assert!(!embed_mode("?mode=embeddedx&hideSidebar=false", ""));
}
