//! The page theme's canvas colours, read from CSS variables (`--tl-*` in web/style.css) so light
//! and dark themes need no Rust; every canvas (the timeline, the flame graph) reads the same ones.

/// The theme's canvas colours.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub bg: String,
    pub fg: String,
    pub muted: String,
    pub grid: String,
    pub gutter: String,
    pub group: String,
    pub ruler: String,
    pub slice_text: String,
    pub select: String,
    pub highlight: String,
    pub reveal: String,
    pub area: String,
    pub flow: String,
    pub step_a: String,
    pub step_b: String,
    pub counter: String,
}

impl Default for Theme {
    fn default() -> Self {
        let s = |v: &str| v.to_owned();
        Theme {
            bg: s("#ffffff"),
            fg: s("#1f2328"),
            muted: s("#57606a"),
            grid: s("#eef0f2"),
            gutter: s("#f6f8fa"),
            group: s("#e9edf1"),
            ruler: s("#fafbfc"),
            slice_text: s("#ffffff"),
            select: s("#0969da"),
            highlight: s("#ffbf00"),
            reveal: s("#ff00aa"),
            area: s("rgba(9,105,218,0.15)"),
            flow: s("#cf222e"),
            step_a: s("#dde7f3"),
            step_b: s("#eef3f9"),
            counter: s("#6f42c1"),
        }
    }
}

impl Theme {
    /// Reads `--tl-*` from the root element's computed style; missing ones keep the defaults.
    pub fn from_css() -> Theme {
        let mut t = Theme::default();
        let Some(style) = web_sys::window().and_then(|w| {
            let el = w.document()?.document_element()?;
            w.get_computed_style(&el).ok().flatten()
        }) else {
            return t;
        };
        let fields: [(&str, &mut String); 16] = [
            ("bg", &mut t.bg),
            ("fg", &mut t.fg),
            ("muted", &mut t.muted),
            ("grid", &mut t.grid),
            ("gutter", &mut t.gutter),
            ("group", &mut t.group),
            ("ruler", &mut t.ruler),
            ("slice-text", &mut t.slice_text),
            ("select", &mut t.select),
            ("highlight", &mut t.highlight),
            ("reveal", &mut t.reveal),
            ("area", &mut t.area),
            ("flow", &mut t.flow),
            ("step-a", &mut t.step_a),
            ("step-b", &mut t.step_b),
            ("counter", &mut t.counter),
        ];
        for (name, slot) in fields {
            if let Ok(v) = style.get_property_value(&format!("--tl-{name}")) {
                let v = v.trim();
                if !v.is_empty() {
                    *slot = v.to_owned();
                }
            }
        }
        t
    }
}

/// Switches the page theme (`data-theme` on `<html>`); the CSS does the rest.
pub fn set_dark(dark: bool) {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = el.set_attribute("data-theme", if dark { "dark" } else { "light" });
    }
}
