//! The one table every analysis view uses: virtualised (only the rows in view are in the DOM, in a
//! fixed-row-height scroller, so 100k rows scroll like 10), sticky header, sortable by clicking a
//! header, numbers right-aligned, keyboard accessible (roving tabindex: arrows, Page Up/Down,
//! Home/End move the focused row, Enter activates it like a click).
//!
//! The table owns no data: the caller gives the row count and a `cell(row, column)` callback over
//! rows already in display order, and sorts when told which column was clicked.
//!
//! Columns are typed: each view declares its columns as an enum ([`columns!`]), so the header,
//! the cell text and the sort key are each one exhaustive `match` — a column added to the header
//! but not to the cells is a compile error, not a silently empty cell or a sort by 0.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Row height in px; CSS `.vt-row` must agree.
pub const ROW_H: f64 = 26.0;
/// Header height in px; CSS `.vt-head` must agree.
const HEAD_H: f64 = 30.0;
/// Rows rendered above and below the visible ones.
const OVERSCAN: usize = 10;

/// A view's column type: an enum whose variants are the columns it can show.
pub trait Column: Copy + PartialEq + Send + Sync + 'static {
    /// Stable key: `data-col` on headers and cells (what CSS and the e2e tests select by).
    fn key(self) -> &'static str;
}

/// Declares a column enum and its stable `data-col` keys:
/// `columns! { enum OpCol { Name = "name", Calls = "calls" } }`.
macro_rules! columns {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($var:ident = $key:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name { $($var),* }
        impl $crate::widgets::table::Column for $name {
            fn key(self) -> &'static str {
                match self { $($name::$var => $key),* }
            }
        }
    };
}
pub(crate) use columns;

/// One shown column: which, and how it looks.
#[derive(Clone, Debug, PartialEq)]
pub struct Col<C> {
    pub id: C,
    pub title: String,
    /// Right-aligned, tabular figures.
    pub num: bool,
    /// Minimum width in px.
    pub px: u32,
    /// Takes the spare width (the name column).
    pub grow: bool,
    pub tip: &'static str,
}

impl<C: Column> Col<C> {
    pub fn num(id: C, title: &str, px: u32) -> Col<C> {
        Col {
            id,
            title: title.to_owned(),
            num: true,
            px,
            grow: false,
            tip: "",
        }
    }
    pub fn text(id: C, title: &str, px: u32) -> Col<C> {
        Col {
            num: false,
            ..Col::num(id, title, px)
        }
    }
    pub fn name(id: C, title: &str, px: u32) -> Col<C> {
        Col {
            grow: true,
            ..Col::text(id, title, px)
        }
    }
    pub fn tip(self, tip: &'static str) -> Col<C> {
        Col { tip, ..self }
    }
}

/// Sorting state: column and descending.
pub type Sort<C> = Option<(C, bool)>;

/// The sort after a click on `col`'s header: the same column flips; a new one starts descending
/// for numbers (largest first) and ascending for text.
pub fn next_sort<C: Column>(cur: Sort<C>, col: C, numeric: bool) -> Sort<C> {
    match cur {
        Some((c, d)) if c == col => Some((col, !d)),
        _ => Some((col, numeric)),
    }
}

#[component]
pub fn VTable<C: Column>(
    #[prop(into)] cols: Signal<Vec<Col<C>>>,
    #[prop(into)] len: Signal<usize>,
    cell: Callback<(usize, C), String>,
    #[prop(optional)] on_activate: Option<Callback<usize>>,
    #[prop(optional)] on_sort: Option<Callback<C>>,
    #[prop(into)] sort: Signal<Sort<C>>,
    testid: &'static str,
    /// Rows visible without scrolling.
    #[prop(default = 18)]
    visible_rows: usize,
    #[prop(optional)] label: &'static str,
    /// Exact value of a cell as `data-bytes` (byte columns), so tests compare with the CLI's
    /// JSON rather than with rounded text.
    #[prop(optional)]
    bytes: Option<Callback<(usize, C), Option<i64>>>,
    /// A click on a cell, before the row's: `true` when it handled it (a link column, e.g. a
    /// module's "flame"), so the row is not activated too.
    #[prop(optional)]
    on_cell: Option<Callback<(usize, C), bool>>,
) -> impl IntoView {
    let scroll = RwSignal::new(0.0f64);
    let cursor = RwSignal::new(0usize);
    let scroller = NodeRef::<leptos::html::Div>::new();
    let template = move || {
        cols.with(|c| {
            c.iter()
                .map(|c| {
                    if c.grow {
                        format!("minmax({}px,1fr)", c.px)
                    } else {
                        format!("{}px", c.px)
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    let min_w = move || cols.with(|c| c.iter().map(|c| c.px + 1).sum::<u32>());
    let range = move || {
        let n = len.get();
        let first = ((scroll.get() / ROW_H) as usize)
            .saturating_sub(OVERSCAN)
            .min(n);
        (first, (first + visible_rows + 2 * OVERSCAN).min(n))
    };
    let height = move || {
        let rows = len.get().clamp(1, visible_rows) as f64;
        format!(
            "max-height:{}px;--vt-cols:{};--vt-min:{}px",
            rows * ROW_H + HEAD_H + 2.0,
            template(),
            min_w()
        )
    };
    let on_scroll = move |_| {
        if let Some(el) = scroller.get_untracked() {
            scroll.set(f64::from(el.scroll_top()));
        }
    };
    let activate = move |r: usize| {
        if let Some(cb) = on_activate {
            cb.run(r);
        }
    };
    // Focus follows the cursor through re-renders: a scroll (End, Page Down) or a sort replaces
    // the rows, and with them the focused one, so a row that had focus, or a move that asked for
    // it, leaves `refocus` set until the cursor's row is on the page and focused.
    let refocus = StoredValue::new(false);
    let focus_cursor = move || {
        if !refocus.get_value() {
            return;
        }
        let sel = format!("[data-row=\"{}\"]", cursor.get_untracked());
        if let Some(row) = scroller
            .get_untracked()
            .and_then(|el| el.query_selector(&sel).ok().flatten())
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = row.focus();
            refocus.set_value(false);
        }
    };
    let move_to = move |r: usize| {
        let Some(el) = scroller.get_untracked() else {
            return;
        };
        cursor.set(r);
        let top = r as f64 * ROW_H;
        let view_h = f64::from(el.client_height()) - HEAD_H;
        let cur = f64::from(el.scroll_top());
        let next = if top < cur {
            top
        } else if top + ROW_H > cur + view_h {
            top + ROW_H - view_h
        } else {
            cur
        };
        if next != cur {
            el.set_scroll_top(next as i32);
            scroll.set(next);
        }
        // Now when the row is on the page (a short move keeps focus in the grid, so the next key
        // press, however soon, reaches `on_key`); otherwise after the rows' re-render.
        refocus.set_value(true);
        focus_cursor();
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let n = len.get_untracked();
        if n == 0 {
            return;
        }
        let c = cursor.get_untracked().min(n - 1);
        let page = visible_rows.saturating_sub(1).max(1);
        let next = match ev.key().as_str() {
            "ArrowDown" => (c + 1).min(n - 1),
            "ArrowUp" => c.saturating_sub(1),
            "PageDown" => (c + page).min(n - 1),
            "PageUp" => c.saturating_sub(page),
            "Home" => 0,
            "End" => n - 1,
            "Enter" | " " => {
                ev.prevent_default();
                activate(c);
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        move_to(next);
    };
    let header = move || {
        cols.get()
            .into_iter()
            .map(|c| {
                let id = c.id;
                let key = id.key();
                let arrow = move || match sort.get() {
                    Some((k, true)) if k == id => " ▼",
                    Some((k, false)) if k == id => " ▲",
                    _ => "",
                };
                let aria = move || match sort.get() {
                    Some((k, true)) if k == id => "descending",
                    Some((k, false)) if k == id => "ascending",
                    _ => "none",
                };
                let sortable = on_sort.is_some();
                view! {
                    <div role="columnheader" class="vt-th" class:num=c.num aria-sort=aria data-col=key title=c.tip>
                        {if sortable {
                            view! {
                                <button class="vt-sort" on:click=move |_| { if let Some(cb) = on_sort { cb.run(id) } }>
                                    {c.title.clone()}{arrow}
                                </button>
                            }.into_any()
                        } else {
                            view! { <span>{c.title.clone()}</span> }.into_any()
                        }}
                    </div>
                }
            })
            .collect_view()
    };
    let rows = move || {
        let (a, b) = range();
        let cs = cols.get();
        // A row had focus (not a header's sort button, which keeps it).
        let had_focus = scroller.get_untracked().is_some_and(|el| {
            document().active_element().is_some_and(|f| {
                el.contains(Some(f.unchecked_ref())) && f.class_list().contains("vt-row")
            })
        });
        if had_focus || refocus.get_value() {
            refocus.set_value(true);
            // Runs after this render has put the new rows on the page.
            request_animation_frame(focus_cursor);
        }
        // The cursor is read per row, not here: a key press must not rebuild the rows, which
        // would drop the focused row from the page between two presses.
        (a..b)
            .map(|r| {
                let cells = cs
                    .iter()
                    .map(|c| {
                        let text = cell.run((r, c.id));
                        // The full text on hover, numbers too: a narrow column never hides a value.
                        let title = text.clone();
                        let exact = bytes.and_then(|b| b.run((r, c.id))).map(|v| v.to_string());
                        let id = c.id;
                        let click = move |ev: web_sys::MouseEvent| {
                            if on_cell.is_some_and(|cb| cb.run((r, id))) {
                                ev.stop_propagation();
                            }
                        };
                        view! { <div role="gridcell" class="vt-td" class:num=c.num data-col=c.id.key() data-bytes=exact title=title on:click=click>{text}</div> }
                    })
                    .collect_view();
                view! {
                    <div
                        role="row"
                        class="vt-row"
                        class:active=move || cursor.get() == r
                        class:odd=r % 2 == 1
                        data-row=r
                        aria-rowindex=r + 2
                        tabindex=move || if cursor.get() == r { "0" } else { "-1" }
                        on:click=move |_| { cursor.set(r); activate(r) }
                        on:focus=move |_| if cursor.get_untracked() != r { cursor.set(r) }
                    >
                        {cells}
                    </div>
                }
            })
            .collect_view()
    };
    let body_style = move || format!("height:{}px", len.get() as f64 * ROW_H);
    view! {
        <div class="vt" data-testid=testid data-rows=move || len.get().to_string()>
            <div class="vt-scroll" node_ref=scroller style=height on:scroll=on_scroll on:keydown=on_key
                role="grid" aria-label=label aria-rowcount=move || len.get() + 1>
                <div class="vt-head" role="row">{header}</div>
                <div class="vt-body" style=body_style>
                    <div class="vt-window" style=move || format!("transform:translateY({}px)", range().0 as f64 * ROW_H)>
                        {rows}
                    </div>
                </div>
            </div>
            <Show when=move || len.get() == 0>
                <p class="vt-empty">"No rows."</p>
            </Show>
        </div>
    }
}
