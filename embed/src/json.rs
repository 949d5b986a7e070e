//! A small JSON value: what the flows read from the flow API and send to it. The text is
//! parsed and written by the browser's own `JSON` (serde_json cost about 25 KB more
//! WebAssembly); this is only the tree the flows index. Money comes as strings, so a
//! number's f64 is exact for what the flows read (counts, sizes).

use std::ops::{Index, IndexMut};

#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    /// A number, as written.
    Number(String),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

static NULL: Value = Value::Null;

impl Value {
    /// An object of these members.
    pub fn obj<const N: usize>(members: [(&str, Value); N]) -> Value {
        Value::Object(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// The value, leaving `Null` in its place.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }

    /// Sets a member of an object (a `Null` becomes an object first).
    pub fn insert(&mut self, key: &str, v: Value) {
        self[key] = v;
    }

    /// Parses JSON text (the browser's `JSON.parse`); `None` when it is not JSON.
    #[cfg(target_arch = "wasm32")]
    pub fn parse(text: &str) -> Option<Value> {
        js_sys::JSON::parse(text).ok().map(|v| js::from_js(&v))
    }

    /// The value as compact JSON text (the browser's `JSON.stringify`).
    #[cfg(target_arch = "wasm32")]
    pub fn to_json(&self) -> String {
        js_sys::JSON::stringify(&js::to_js(self)).ok().and_then(|s| s.as_string()).unwrap_or_default()
    }
}

/// Between the browser's values and [`Value`].
#[cfg(target_arch = "wasm32")]
mod js {
    use js_sys::{Array, Object, Reflect};
    use wasm_bindgen::{JsCast, JsValue};

    use super::Value;

    pub fn from_js(v: &JsValue) -> Value {
        if v.is_null() || v.is_undefined() {
            Value::Null
        } else if let Some(b) = v.as_bool() {
            Value::Bool(b)
        } else if v.as_f64().is_some() {
            // JavaScript's own number text: Rust's float formatting would add kilobytes.
            Value::Number(v.unchecked_ref::<js_sys::Number>().to_string_with_radix(10).map(String::from).unwrap_or_default())
        } else if let Some(s) = v.as_string() {
            Value::String(s)
        } else if Array::is_array(v) {
            Value::Array(Array::from(v).iter().map(|x| from_js(&x)).collect())
        } else {
            let entries = Object::entries(v.unchecked_ref());
            Value::Object(
                entries
                    .iter()
                    .map(|e| {
                        let e: Array = e.unchecked_into();
                        (e.get(0).as_string().unwrap_or_default(), from_js(&e.get(1)))
                    })
                    .collect(),
            )
        }
    }

    pub fn to_js(v: &Value) -> JsValue {
        match v {
            Value::Null => JsValue::NULL,
            Value::Bool(b) => JsValue::from_bool(*b),
            Value::Number(n) => JsValue::from_f64(js_sys::Number::parse_float(n)),
            Value::String(s) => JsValue::from_str(s),
            Value::Array(a) => a.iter().map(to_js).collect::<Array>().into(),
            Value::Object(m) => {
                let o = Object::new();
                for (k, x) in m {
                    // Setting a property of a fresh plain object cannot fail.
                    let _ = Reflect::set(&o, &JsValue::from_str(k), &to_js(x));
                }
                o.into()
            }
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Number(n.to_string())
    }
}

impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Value {
        Value::Array(a)
    }
}

impl Index<&str> for Value {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        match self {
            Value::Object(m) => m.iter().find(|(k, _)| k == key).map_or(&NULL, |(_, v)| v),
            _ => &NULL,
        }
    }
}

impl IndexMut<&str> for Value {
    /// The member, added as `Null` when missing; anything but an object becomes one.
    fn index_mut(&mut self, key: &str) -> &mut Value {
        if !self.is_object() {
            *self = Value::Object(vec![]);
        }
        let Value::Object(m) = self else { unreachable!() };
        let at = match m.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                m.push((key.to_string(), Value::Null));
                m.len() - 1
            }
        };
        &mut m[at].1
    }
}

impl Index<usize> for Value {
    type Output = Value;

    fn index(&self, i: usize) -> &Value {
        match self {
            Value::Array(a) => a.get(i).unwrap_or(&NULL),
            _ => &NULL,
        }
    }
}
