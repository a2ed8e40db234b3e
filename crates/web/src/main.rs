//! Tracelight's browser app. `main` only wires things up; see `app`.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(tracelight_web::app::App);
}
