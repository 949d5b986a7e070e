//! Gable's embeddable flows (`docs/embed.md`): the rental application, the booking, the
//! payment and the tenant portal, as Leptos components compiled to one WebAssembly
//! bundle (`embed/build.sh`). `boot.js` starts it; [`start`] reads the page's `<meta>` tags
//! and the token in its address, loads `GET /v1/flow` and mounts the flow into
//! `<main id="gable-flow">`.
//!
//! On the host only the plain logic compiles (dates, money, rules, with their tests): the
//! flows and every dependency are for `wasm32` only.

pub mod dates;
pub mod json;
pub mod money;
pub mod rules;

#[cfg(target_arch = "wasm32")]
mod api;
#[cfg(target_arch = "wasm32")]
mod application;
#[cfg(target_arch = "wasm32")]
mod booking;
#[cfg(target_arch = "wasm32")]
mod env;
#[cfg(target_arch = "wasm32")]
mod fresh;
#[cfg(target_arch = "wasm32")]
mod payment;
#[cfg(target_arch = "wasm32")]
mod portal;
#[cfg(target_arch = "wasm32")]
mod shell;
#[cfg(target_arch = "wasm32")]
mod ui;

/// Mounts the page's flow (called once the module is instantiated).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    use wasm_bindgen::JsCast;
    env::init();
    let Some(main) = leptos::prelude::document().get_element_by_id("gable-flow") else { return };
    main.set_text_content(None);
    leptos::mount::mount_to(main.unchecked_into(), shell::app).forget();
}
