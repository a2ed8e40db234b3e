//! Keyboard and pointer input mapped to timeline state: wheel zooms around the cursor (horizontal
//! wheel pans, shift+wheel scrolls rows), WASD zoom/pan, drag on a slice or the ruler pans, drag on
//! empty track space selects an area, click selects, double-click or `f` zooms to a slice.

use super::layout::{GUTTER_PX, RULER_PX};
use super::tlstate::{is_group, Area, Ctx};
use leptos::prelude::*;
use tracelight_core::view::hit::{hit, Hit};
use wasm_bindgen::JsCast;
use web_sys::{KeyboardEvent, MouseEvent, WheelEvent};

/// An ongoing drag.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Drag {
    Pan { x: f64, y: f64, moved: f64 },
    Area { x0: f64, y0: f64, moved: f64 },
}

/// Pixels a press may move and still count as a click.
const CLICK_SLOP: f64 = 4.0;

fn pos(ev: &MouseEvent) -> (f64, f64) {
    (f64::from(ev.offset_x()), f64::from(ev.offset_y()))
}

/// Track-area x and content y of a canvas point.
fn to_view(c: &Ctx, (x, y): (f64, f64)) -> (f64, f64) {
    (x - GUTTER_PX, y - RULER_PX + c.tl.scroll.get_untracked())
}

fn max_scroll(c: &Ctx) -> f64 {
    let total = super::layout::total_height(&c.rows.get_untracked());
    (total - c.tl.rows_height(RULER_PX)).max(0.0)
}

pub fn scroll_by(c: &Ctx, dy: f64) {
    let s = (c.tl.scroll.get_untracked() + dy).clamp(0.0, max_scroll(c));
    c.tl.scroll.set(s);
}

fn zoom(c: &Ctx, factor: f64, at: Option<f64>) {
    let vp = c.tl.vp.get_untracked();
    let x = at.unwrap_or(vp.width_px / 2.0).clamp(0.0, vp.width_px);
    c.tl.vp.set(vp.zoom(factor, x, c.data.bounds));
}

pub fn on_wheel(c: &Ctx, ev: &WheelEvent) {
    ev.prevent_default();
    let unit = match ev.delta_mode() {
        1 => 40.0,
        2 => 800.0,
        _ => 1.0,
    };
    let (dx, dy) = (ev.delta_x() * unit, ev.delta_y() * unit);
    if ev.shift_key() {
        scroll_by(c, if dy != 0.0 { dy } else { dx });
        return;
    }
    if dx.abs() > dy.abs() {
        let vp = c.tl.vp.get_untracked();
        c.tl.vp.set(vp.pan(dx));
        return;
    }
    // Pinch arrives as ctrl+wheel with small deltas: zoom faster per unit.
    let k = if ev.ctrl_key() { 0.01 } else { 0.002 };
    let (x, _) = to_view(c, pos(ev));
    zoom(c, (dy * k).clamp(-1.0, 1.0).exp(), Some(x));
}

pub fn on_down(c: &Ctx, drag: StoredValue<Option<Drag>>, ev: &MouseEvent) {
    if ev.button() != 0 && ev.button() != 1 {
        return;
    }
    let (x, y) = pos(ev);
    let (vx, vy) = to_view(c, (x, y));
    let on_ruler = y < RULER_PX;
    let Some(t) = c.trace() else { return };
    let rows = c.rows.get_untracked();
    let h = if on_ruler || vx < 0.0 {
        Hit::None
    } else {
        hit(t, &c.data.lod, &rows, &c.tl.vp.get_untracked(), vx, vy)
    };
    let empty = matches!(h, Hit::Empty(_)) || (matches!(h, Hit::None) && vx >= 0.0 && !on_ruler);
    let d = if empty && ev.button() == 0 && !ev.alt_key() {
        Drag::Area {
            x0: x,
            y0: y,
            moved: 0.0,
        }
    } else {
        Drag::Pan { x, y, moved: 0.0 }
    };
    drag.set_value(Some(d));
}

pub fn on_move(c: &Ctx, drag: StoredValue<Option<Drag>>, ev: &MouseEvent) {
    let (x, y) = pos(ev);
    c.tl.pointer_x
        .set((x >= GUTTER_PX).then_some(x - GUTTER_PX));
    match drag.get_value() {
        Some(Drag::Pan {
            x: px,
            y: py,
            moved,
        }) => {
            let vp = c.tl.vp.get_untracked();
            if x != px {
                c.tl.vp.set(vp.pan(px - x));
            }
            if y != py {
                scroll_by(c, py - y);
            }
            let moved = moved + (x - px).abs() + (y - py).abs();
            drag.set_value(Some(Drag::Pan { x, y, moved }));
        }
        Some(Drag::Area { x0, y0, .. }) => {
            let moved = (x - x0).abs() + (y - y0).abs();
            drag.set_value(Some(Drag::Area { x0, y0, moved }));
            if moved >= CLICK_SLOP {
                c.tl.area.set(Some(area_of(c, (x0, y0), (x, y))));
            }
        }
        None => {}
    }
}

fn area_of(c: &Ctx, a: (f64, f64), b: (f64, f64)) -> Area {
    let vp = c.tl.vp.get_untracked();
    let (ax, ay) = to_view(c, a);
    let (bx, by) = to_view(c, b);
    let (x0, x1) = (ax.min(bx).max(0.0), ax.max(bx));
    Area {
        t0: vp.ns_at(x0),
        t1: vp.ns_at(x1),
        y0: ay.min(by),
        y1: ay.max(by),
    }
}

pub fn on_up(c: &Ctx, drag: StoredValue<Option<Drag>>, ev: &MouseEvent) {
    let Some(d) = drag.get_value() else { return };
    drag.set_value(None);
    let moved = match d {
        Drag::Pan { moved, .. } | Drag::Area { moved, .. } => moved,
    };
    if moved >= CLICK_SLOP {
        if matches!(d, Drag::Area { .. }) {
            c.tl.area_done.set(c.tl.area.get_untracked());
        }
        return;
    }
    click(c, pos(ev));
}

fn click(c: &Ctx, (x, y): (f64, f64)) {
    let (vx, vy) = to_view(c, (x, y));
    if y < RULER_PX {
        return;
    }
    let rows = c.rows.get_untracked();
    if vx < 0.0 {
        if let Some(g) = is_group(&rows, vy) {
            toggle_group(c, g);
        } else if let Some(g) = is_idle(&rows, vy) {
            toggle_idle(c, g);
        }
        return;
    }
    let Some(t) = c.trace() else { return };
    match hit(t, &c.data.lod, &rows, &c.tl.vp.get_untracked(), vx, vy) {
        Hit::Slice(i) => c.tl.selected.set(Some(i)),
        Hit::Group(g) => toggle_group(c, g),
        Hit::Idle(g) => toggle_idle(c, g),
        Hit::Empty(_) | Hit::None => {
            c.tl.selected.set(None);
            c.tl.area.set(None);
            c.tl.area_done.set(None);
        }
    }
}

fn is_idle(rows: &[super::layout::Row], y: f64) -> Option<usize> {
    let r = super::layout::row_at(rows, y)?;
    match rows[r].kind {
        super::layout::RowKind::Idle(g) => Some(g),
        _ => None,
    }
}

pub fn toggle_idle(c: &Ctx, g: usize) {
    c.tl.idle_open.update(|v| {
        if let Some(x) = v.get_mut(g) {
            *x = !*x;
        }
    });
}

pub fn toggle_group(c: &Ctx, g: usize) {
    c.tl.collapsed.update(|v| {
        if let Some(x) = v.get_mut(g) {
            *x = !*x;
        }
    });
}

pub fn on_dblclick(c: &Ctx, ev: &MouseEvent) {
    let (vx, vy) = to_view(c, pos(ev));
    let Some(t) = c.trace() else { return };
    let rows = c.rows.get_untracked();
    if let Hit::Slice(i) = hit(t, &c.data.lod, &rows, &c.tl.vp.get_untracked(), vx, vy) {
        c.tl.selected.set(Some(i));
        c.zoom_to(i);
    }
}

/// Keys typed into a text field are not commands.
fn typing(ev: &KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|e| matches!(e.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"))
}

pub fn on_key(c: &Ctx, ev: &KeyboardEvent) {
    if typing(ev) || ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
        return;
    }
    let at = c.tl.pointer_x.get_untracked();
    let vp = c.tl.vp.get_untracked();
    let fast = if ev.shift_key() { 2.0 } else { 1.0 };
    match ev.key().to_ascii_lowercase().as_str() {
        "w" => zoom(c, 0.8f64.powf(fast), at),
        "s" => zoom(c, 1.25f64.powf(fast), at),
        "a" => c.tl.vp.set(vp.pan(-vp.width_px * 0.1 * fast)),
        "d" => c.tl.vp.set(vp.pan(vp.width_px * 0.1 * fast)),
        "f" => {
            if let Some(i) = c.tl.selected.get_untracked() {
                c.zoom_to(i);
            } else if let Some(a) = c.tl.area_done.get_untracked() {
                c.tl.vp.set(super::viewport::Viewport::new(
                    a.t0,
                    a.t1.max(a.t0 + 1),
                    vp.width_px,
                ));
            }
        }
        "escape" => {
            c.tl.selected.set(None);
            c.tl.area.set(None);
            c.tl.area_done.set(None);
        }
        _ => return,
    }
    ev.prevent_default();
}
