//! One requestAnimationFrame loop (STYLE 9): any number of changes between two frames cost one
//! paint, and painting never happens inside an event handler.

use leptos::prelude::*;

#[derive(Clone, Copy)]
pub struct Frames {
    pending: StoredValue<bool>,
}

impl Frames {
    pub fn new() -> Frames {
        Frames {
            pending: StoredValue::new(false),
        }
    }

    /// Runs `paint` on the next animation frame unless a frame is already due.
    pub fn request(&self, paint: impl FnOnce() + 'static) {
        if self.pending.try_get_value().unwrap_or(true) {
            return;
        }
        self.pending.set_value(true);
        let pending = self.pending;
        request_animation_frame(move || {
            if pending.try_set_value(false).is_some() {
                return; // the timeline was unmounted
            }
            paint();
        });
    }
}

impl Default for Frames {
    fn default() -> Self {
        Self::new()
    }
}
