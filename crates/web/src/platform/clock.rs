//! Time and scheduling on the page's main thread: the one `now_ms`, the one way to yield to the
//! browser, and the size of the wasm memory.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Milliseconds since the page started (`performance.now()`), 0 where there is no window.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Lets the browser paint and handle input. A `MessageChannel` message is a new task, like
/// `setTimeout(0)`, without the 4 ms clamp nested timers get.
pub async fn yield_now() {
    let p = js_sys::Promise::new(&mut |resolve, _| match web_sys::MessageChannel::new() {
        Ok(ch) => {
            ch.port1().set_onmessage(Some(resolve.unchecked_ref()));
            let _ = ch.port2().post_message(&JsValue::NULL);
        }
        Err(_) => {
            if let Some(w) = web_sys::window() {
                let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
            }
        }
    });
    let _ = JsFuture::from(p).await;
}

/// Waits until the browser has produced the next frame: an animation frame, then a task
/// ([`yield_now`]) so that what comes after runs once that frame is painted, not before it.
/// Where no frame comes (no window), a task.
pub async fn after_paint() {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        let asked = web_sys::window().is_some_and(|w| w.request_animation_frame(&resolve).is_ok());
        if !asked {
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = JsFuture::from(p).await;
    yield_now().await;
}

/// Waits `ms` milliseconds (a `setTimeout`), without holding the page.
pub async fn sleep_ms(ms: i32) {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        } else {
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = JsFuture::from(p).await;
}

/// Waits until the page is idle (`requestIdleCallback`), at most `max_ms`.
///
/// For work whose cost lands on whatever the page runs beside it rather than on a task of its
/// own: a finished worker's `terminate()` unmaps its instance's memory (700 MB after a 1 GB
/// snapshot), and for those ~50 ms the page's own first render stalled with it.
pub async fn when_idle(max_ms: u32) {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        let Some(w) = web_sys::window() else {
            let _ = resolve.call0(&JsValue::NULL);
            return;
        };
        let opts = web_sys::IdleRequestOptions::new();
        opts.set_timeout(max_ms);
        if w.request_idle_callback_with_options(&resolve, &opts)
            .is_err()
        {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
        }
    });
    let _ = JsFuture::from(p).await;
}

/// Size of the wasm linear memory: it only grows, so after a load it is the load's peak.
pub fn wasm_memory_bytes() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size::<0>() as u64 * 65536
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}
