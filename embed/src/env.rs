//! The page around the flow: its `<meta>` tags and token, the messages to the host page
//! (`window.parent.postMessage`, to its origin only, which the flow checks is the token's)
//! and from it (`ping`), the content's height, and random keys.

use std::cell::Cell;
use std::sync::OnceLock;

use js_sys::{Object, Reflect};
use leptos::prelude::{document, window};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, ResizeObserver, UrlSearchParams};

/// What the page tells the flow.
pub struct Ctx {
    /// `gable:flow`: which flow the page serves.
    pub flow: String,
    /// `gable:parent-origin`: the only origin messages go to (none when empty). The page's
    /// `frame-ancestors` names it, so a framing page is on it; the flow is shown only when
    /// it is the token's origin (`shell`).
    pub parent_origin: String,
    /// `gable:frame`: the loader's id of the iframe, in every message.
    pub frame: String,
    /// The flow token, from the fragment of the page's own address (`#token=…`).
    pub token: String,
}

static CTX: OnceLock<Ctx> = OnceLock::new();

thread_local! {
    static LAST_HEIGHT: Cell<f64> = const { Cell::new(-1.0) };
    static OBSERVING: Cell<bool> = const { Cell::new(false) };
    static READY: Cell<bool> = const { Cell::new(false) };
}

fn meta(name: &str) -> String {
    document()
        .query_selector(&format!("meta[name=\"{name}\"]"))
        .ok()
        .flatten()
        .and_then(|m| m.get_attribute("content"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The token in the address's fragment, which is then removed from the address at once
/// (the fragment never reaches a server; removing it keeps it out of the history, and of
/// any copy of the address the page may make).
fn take_token() -> String {
    let location = window().location();
    let hash = location.hash().unwrap_or_default();
    let token = UrlSearchParams::new_with_str(hash.trim_start_matches('#')).ok().and_then(|p| p.get("token")).unwrap_or_default();
    if !hash.is_empty() {
        let path = format!("{}{}", location.pathname().unwrap_or_default(), location.search().unwrap_or_default());
        if let Ok(history) = window().history() {
            let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&path));
        }
    }
    token
}

/// Reads the page once and starts answering the loader's pings.
pub fn init() {
    let token = take_token();
    let _ = CTX.set(Ctx { flow: meta("gable:flow"), parent_origin: meta("gable:parent-origin"), frame: meta("gable:frame"), token });
    if !ctx().parent_origin.is_empty() && parent().is_some() {
        // The loader sizes the frame to the content (see style/embed.css).
        if let Some(root) = document().document_element() {
            let _ = root.class_list().add_1("framed");
        }
    }
    listen();
}

pub fn ctx() -> &'static Ctx {
    CTX.get_or_init(|| Ctx { flow: String::new(), parent_origin: String::new(), frame: String::new(), token: String::new() })
}

/// The window that frames this page, if it is framed.
fn parent() -> Option<web_sys::Window> {
    let w = window();
    window().parent().ok().flatten().filter(|p| !Object::is(p, &w))
}

/// Posts `{gable: 1, frame, type, ...fields}` to the host page, at its origin only.
pub fn post(kind: &str, fields: &[(&str, JsValue)]) {
    let c = ctx();
    if c.parent_origin.is_empty() {
        return;
    }
    let Some(parent) = parent() else { return };
    let msg = Object::new();
    let set = |k: &str, v: &JsValue| {
        let _ = Reflect::set(&msg, &JsValue::from_str(k), v);
    };
    set("gable", &JsValue::from(1));
    set("frame", &JsValue::from_str(&c.frame));
    set("type", &JsValue::from_str(kind));
    for (k, v) in fields {
        set(k, v);
    }
    let _ = parent.post_message(&msg, &c.parent_origin);
}

/// The content's height in CSS pixels, rounded up (the `<html>` box: its content, not the
/// frame's viewport, so the frame can shrink too).
pub fn height() -> f64 {
    document().document_element().map(|e| e.get_bounding_client_rect().height().ceil()).unwrap_or(0.0)
}

fn send_resize(always: bool) {
    let h = height();
    if always || LAST_HEIGHT.with(|l| l.get()) != h {
        LAST_HEIGHT.with(|l| l.set(h));
        post("resize", &[("height", JsValue::from_f64(h))]);
    }
}

/// Reports each change of the content's height from now on.
fn observe() {
    if OBSERVING.with(|o| o.replace(true)) {
        return;
    }
    let Some(root) = document().document_element() else { return };
    let cb = Closure::<dyn FnMut(JsValue, JsValue)>::new(move |_: JsValue, _: JsValue| send_resize(false));
    if let Ok(ro) = ResizeObserver::new(cb.as_ref().unchecked_ref()) {
        ro.observe(&root);
        std::mem::forget(ro);
    }
    cb.forget();
}

/// The first step is shown with its data: `ready`, then `resize` on each change.
pub fn ready() {
    if READY.with(|r| r.replace(true)) {
        return;
    }
    let h = height();
    LAST_HEIGHT.with(|l| l.set(h));
    post("ready", &[("height", JsValue::from_f64(h))]);
    observe();
}

/// The flow cannot go on, or a payment was declined: `error` with the API's code.
pub fn error(code: &str, message: &str) {
    let h = height();
    LAST_HEIGHT.with(|l| l.set(h));
    post("error", &[("code", JsValue::from_str(code)), ("message", JsValue::from_str(message)), ("height", JsValue::from_f64(h))]);
    observe();
}

/// The flow reached its goal: `completed` with the record made.
pub fn completed(object: &str, id: &str, status: &str) {
    post("completed", &[("object", JsValue::from_str(object)), ("id", JsValue::from_str(id)), ("status", JsValue::from_str(status))]);
}

/// Answers the loader's `ping` with the current height; only from the framing window, at
/// its origin, for this frame.
fn listen() {
    let cb = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let c = ctx();
        if c.parent_origin.is_empty() || e.origin() != c.parent_origin {
            return;
        }
        let from_parent = match (e.source(), parent()) {
            (Some(src), Some(p)) => Object::is(&src, &p),
            _ => false,
        };
        if !from_parent {
            return;
        }
        let data = e.data();
        let get = |k: &str| Reflect::get(&data, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED);
        if get("gable").as_f64() == Some(1.0)
            && get("frame").as_string().as_deref() == Some(c.frame.as_str())
            && get("type").as_string().as_deref() == Some("ping")
        {
            send_resize(true);
        }
    });
    let _ = window().add_event_listener_with_callback("message", cb.as_ref().unchecked_ref());
    cb.forget();
}

/// A new `Idempotency-Key`: a random version 4 UUID (`crypto.getRandomValues`).
pub fn random_key() -> String {
    let mut b = [0u8; 16];
    if let Ok(c) = window().crypto() {
        let _ = c.get_random_values_with_u8_array(&mut b);
    }
    if b == [0u8; 16] {
        // No crypto (never in a browser that runs WebAssembly): still unique enough per page.
        let t = js_sys::Date::now().to_bits().to_le_bytes();
        let r = js_sys::Math::random().to_bits().to_le_bytes();
        b[..8].copy_from_slice(&t);
        b[8..].copy_from_slice(&r);
    }
    crate::rules::uuid_v4(b)
}

/// Moves focus to the element with this id once the view has rendered it (a new step's
/// heading, a field with an error).
pub fn focus_later(id: &'static str) {
    focus_id_later(id.to_string());
}

pub fn focus_id_later(id: String) {
    leptos::prelude::set_timeout(
        move || {
            if let Some(el) = document().get_element_by_id(&id).and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
                let _ = el.focus();
            }
        },
        std::time::Duration::ZERO,
    );
}
