//! Hydrates the server-rendered console in the browser.
#![recursion_limit = "256"] // deeply nested view types of the console pages

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(gable_app::App);
}
