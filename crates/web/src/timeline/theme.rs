//! Canvas colours: slice categories (fixed, shared by the legend) and the page theme's colours,
//! read from CSS variables (`--tl-*` in web/style.css) so light and dark themes need no Rust.

use tracelight_core::model::SliceKind;

/// What a slice's colour says: its kind, with communication kernels apart from compute kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cat {
    CpuOp,
    Annotation,
    Python,
    Runtime,
    Kernel,
    Comm,
    Memcpy,
    Memset,
    GpuAnnotation,
    Other,
}

impl Cat {
    pub const ALL: [Cat; 10] = [
        Cat::CpuOp,
        Cat::Annotation,
        Cat::Python,
        Cat::Runtime,
        Cat::Kernel,
        Cat::Comm,
        Cat::Memcpy,
        Cat::Memset,
        Cat::GpuAnnotation,
        Cat::Other,
    ];

    pub fn of(kind: SliceKind, comm: bool) -> Cat {
        match kind {
            SliceKind::CpuOp => Cat::CpuOp,
            SliceKind::UserAnnotation => Cat::Annotation,
            SliceKind::PythonFunction => Cat::Python,
            SliceKind::Runtime | SliceKind::Driver => Cat::Runtime,
            SliceKind::Kernel if comm => Cat::Comm,
            SliceKind::Kernel => Cat::Kernel,
            SliceKind::Memcpy => Cat::Memcpy,
            SliceKind::Memset => Cat::Memset,
            SliceKind::GpuAnnotation => Cat::GpuAnnotation,
            SliceKind::Other => Cat::Other,
        }
    }

    pub fn color(self) -> &'static str {
        match self {
            Cat::CpuOp => "#4e79a7",
            Cat::Annotation => "#9c755f",
            Cat::Python => "#b07aa1",
            Cat::Runtime => "#f28e2b",
            Cat::Kernel => "#59a14f",
            Cat::Comm => "#8c564b",
            Cat::Memcpy => "#e15759",
            Cat::Memset => "#d37295",
            Cat::GpuAnnotation => "#76b7b2",
            Cat::Other => "#9d9792",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Cat::CpuOp => "CPU op",
            Cat::Annotation => "annotation",
            Cat::Python => "python",
            Cat::Runtime => "CUDA runtime",
            Cat::Kernel => "kernel",
            Cat::Comm => "NCCL kernel",
            Cat::Memcpy => "memcpy",
            Cat::Memset => "memset",
            Cat::GpuAnnotation => "GPU annotation",
            Cat::Other => "other",
        }
    }
}

/// Colour of a slice kind (compute kernels for `Kernel`).
pub fn kind_color(k: SliceKind) -> &'static str {
    Cat::of(k, false).color()
}

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
