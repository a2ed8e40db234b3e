//! A posted message's data, read into a typed [`Message`] or refused with a [`Reject`]. Only the
//! fields the protocol names are read (`Reflect.get`, no walk over the object), and a text field's
//! length is checked before it is copied, so a huge or deeply nested message costs nothing.

use super::protocol::{byte_total, file_name, occurrence, Reject, MAX_TEXT};
use js_sys::{ArrayBuffer, JsString, Reflect};
use wasm_bindgen::{JsCast, JsValue};

/// The bytes of a posted trace.
pub enum Payload {
    /// An `ArrayBuffer` or a view of one.
    Buffer(JsValue),
    /// A transferred `ReadableStream` and its announced size (`bytesTotal`).
    Stream(JsValue, Option<u64>),
}

/// A trace to open: Perfetto's `{perfetto: {buffer|stream, title, fileName, url, keepApiOpen}}`,
/// or B of our `compare` command.
pub struct Open {
    pub payload: Payload,
    pub name: String,
    /// Where the host says the trace came from: reported back, never fetched.
    pub url: Option<String>,
    pub keep_api_open: bool,
}

/// What an op or kernel name in `reveal` refers to (the deep link's kinds).
pub use tracelight_core::view::link::Named as Kind;

pub enum Message {
    Ping,
    Open(Open),
    /// Perfetto's `{timeStart, timeEnd, viewPercentage}`, seconds.
    Window(f64, f64, Option<f64>),
    OpenTab(String),
    /// An op or kernel by name and occurrence (0-based index in time order).
    Reveal(Kind, String, usize),
    Compare(Open),
    Stats,
}

/// The field `k` of `v`, undefined when `v` is no object.
fn field(v: &JsValue, k: &str) -> JsValue {
    if !v.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(v, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
}

fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

fn text(v: &JsValue) -> Result<Option<String>, Reject> {
    if absent(v) {
        return Ok(None);
    }
    let s = v.dyn_ref::<JsString>().ok_or(Reject::BadField)?;
    if s.length() > MAX_TEXT {
        return Err(Reject::TooLong);
    }
    Ok(Some(String::from(s)))
}

fn number(v: &JsValue) -> Result<Option<f64>, Reject> {
    if absent(v) {
        return Ok(None);
    }
    v.as_f64().map(Some).ok_or(Reject::BadField)
}

fn flag(v: &JsValue) -> Result<bool, Reject> {
    if absent(v) {
        return Ok(false);
    }
    v.as_bool().ok_or(Reject::BadField)
}

fn is_buffer(v: &JsValue) -> bool {
    v.is_instance_of::<ArrayBuffer>() || ArrayBuffer::is_view(v)
}

/// Whether a message is Perfetto's "not for you" (`perfettoIgnore: true`): left alone, uncounted.
pub fn is_ignored(data: &JsValue) -> bool {
    field(data, "perfettoIgnore").as_bool() == Some(true)
}

/// A trace to open from `o` (the `perfetto` object, or a `compare` command).
fn open(o: &JsValue) -> Result<Open, Reject> {
    let buffer = field(o, "buffer");
    let stream = field(o, "stream");
    let payload = if !absent(&buffer) {
        if !is_buffer(&buffer) {
            return Err(Reject::BadField);
        }
        Payload::Buffer(buffer)
    } else if stream.is_instance_of::<web_sys::ReadableStream>() {
        Payload::Stream(stream, byte_total(number(&field(o, "bytesTotal"))?)?)
    } else {
        return Err(Reject::BadField);
    };
    let title = text(&field(o, "title"))?;
    let name = text(&field(o, "fileName"))?;
    Ok(Open {
        payload,
        name: file_name(name.as_deref(), title.as_deref()),
        url: text(&field(o, "url"))?,
        keep_api_open: flag(&field(o, "keepApiOpen"))?,
    })
}

fn perfetto(p: &JsValue) -> Result<Message, Reject> {
    if !p.is_object() {
        return Err(Reject::BadField);
    }
    let (ts, te) = (field(p, "timeStart"), field(p, "timeEnd"));
    if !absent(&ts) || !absent(&te) {
        let (Some(a), Some(b)) = (number(&ts)?, number(&te)?) else {
            return Err(Reject::BadField);
        };
        return Ok(Message::Window(a, b, number(&field(p, "viewPercentage"))?));
    }
    open(p).map(Message::Open)
}

fn command(c: &JsValue) -> Result<Message, Reject> {
    match text(&field(c, "command"))?.as_deref() {
        Some("open-tab") => text(&field(c, "tab"))?
            .map(Message::OpenTab)
            .ok_or(Reject::BadField),
        Some("reveal") => {
            let kind = match text(&field(c, "kind"))?.as_deref() {
                Some("op") | None => Kind::Op,
                Some("kernel") => Kind::Kernel,
                Some(_) => return Err(Reject::BadField),
            };
            let name = text(&field(c, "name"))?
                .filter(|n| !n.is_empty())
                .ok_or(Reject::BadField)?;
            let n = occurrence(number(&field(c, "occurrence"))?)?;
            Ok(Message::Reveal(kind, name, n))
        }
        Some("compare") => open(c).map(Message::Compare),
        Some("stats") => Ok(Message::Stats),
        _ => Err(Reject::UnknownShape),
    }
}

/// Reads a message's data: `"PING"`, a bare `ArrayBuffer` (Perfetto's oldest form),
/// `{perfetto: …}` or `{tracelight: {command, …}}`.
pub fn decode(data: &JsValue) -> Result<Message, Reject> {
    if let Some(s) = data.dyn_ref::<JsString>() {
        return if *s == "PING" {
            Ok(Message::Ping)
        } else {
            Err(Reject::UnknownShape)
        };
    }
    if data.is_instance_of::<ArrayBuffer>() {
        return Ok(Message::Open(Open {
            payload: Payload::Buffer(data.clone()),
            name: file_name(None, Some("External trace")),
            url: None,
            keep_api_open: false,
        }));
    }
    let p = field(data, "perfetto");
    if !absent(&p) {
        return perfetto(&p);
    }
    let c = field(data, "tracelight");
    if c.is_object() {
        return command(&c);
    }
    Err(Reject::UnknownShape)
}
