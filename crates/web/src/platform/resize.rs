//! Watching an element's own box, not the window: a page scrollbar appearing or going, a side
//! panel opening or being dragged wider all resize a canvas without any `resize` event, and a
//! canvas whose backing store no longer matches its box is drawn stretched and blurry.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::ResizeObserver;

/// A live `ResizeObserver` and the callback it calls; dropping it stops the observation first,
/// so the browser never calls a freed closure.
pub struct SizeWatch {
    observer: ResizeObserver,
    _callback: Closure<dyn FnMut()>,
}

impl Drop for SizeWatch {
    fn drop(&mut self) {
        self.observer.disconnect();
    }
}

/// Calls `on_change` whenever `el`'s box changes size, and once as observation starts (the
/// observer reports the initial size). `None` where the browser has no `ResizeObserver`.
pub fn watch(el: &web_sys::Element, on_change: impl FnMut() + 'static) -> Option<SizeWatch> {
    let callback = Closure::<dyn FnMut()>::new(on_change);
    let observer = ResizeObserver::new(callback.as_ref().unchecked_ref()).ok()?;
    observer.observe(el);
    Some(SizeWatch {
        observer,
        _callback: callback,
    })
}

/// Runs `measure` when the element behind `node` mounts and whenever its box or the window
/// changes size, for as long as the calling component lives.
pub fn follow<E>(node: NodeRef<E>, measure: impl Fn() + Clone + 'static)
where
    E: leptos::html::ElementType,
    E::Output: JsCast + Clone + 'static,
{
    let held = StoredValue::new_local(None::<SizeWatch>);
    let m = measure.clone();
    let resize = window_event_listener(leptos::ev::resize, move |_| m());
    on_cleanup(move || resize.remove());
    Effect::new(move |_| {
        let Some(el) = node.get() else { return };
        let Some(el) = el.dyn_ref::<web_sys::Element>() else {
            return;
        };
        measure();
        held.set_value(watch(el, measure.clone()));
    });
}
