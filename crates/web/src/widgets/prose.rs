//! Core's sentences on the page: they mark names with Markdown backticks (`all_reduce`) for the
//! CLI's Markdown; here those spans become `<code>`, the rest stays text.

use leptos::prelude::*;

/// `s` with its backticked spans as `<code>` elements.
pub fn prose(s: &str) -> Vec<AnyView> {
    s.split('`')
        .enumerate()
        .filter(|(_, part)| !part.is_empty())
        .map(|(k, part)| {
            if k % 2 == 1 {
                view! { <code>{part.to_owned()}</code> }.into_any()
            } else {
                part.to_owned().into_any()
            }
        })
        .collect()
}
