//! The page's query string (`?url=`, `?inflate=`); the hash's deep link is in [`super::hash`].

/// The value of query parameter `name`, if the page's URL has one.
pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
    params.get(name)
}
