//! Assembling a workload spec from layers, one function for every workload: the spec's
//! defaults, then each layer's fields by name in order (`ibench run`'s flags; an experiment's
//! `[workload]`, then its setup), then a scale on its rows and seconds. A value that does not
//! fit its field's type is an error naming the field, never a silent return to the defaults.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::FieldNames;

/// A field computed from the others when no layer sets it, and how.
pub type Derived = (&'static str, fn(&Map<String, Value>) -> Value);

/// A workload spec [`assemble`] builds from layers.
pub trait Layered: Default + Serialize + DeserializeOwned {
    /// Fields whose default is computed from the other fields when no layer sets them
    /// (the Insert Benchmark's `l2_rows`: a quarter of `l1_rows`).
    const DERIVED: &'static [Derived] = &[];

    /// Multiplies the spec's rows and seconds by `scale` (not 1).
    fn scale(&mut self, scale: f64);
}

/// `n` times `scale`, rounded, at least 1.
pub(crate) fn scaled(n: u64, scale: f64) -> u64 {
    ((n as f64 * scale).round() as u64).max(1)
}

/// A layer's value that does not fit its field's type.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerError {
    /// The field at fault (its Rust name) and the value the layers gave it; `None` when no
    /// one field is.
    pub field: Option<(String, Value)>,
    /// What is wrong, in serde's words (`invalid type: sequence, expected usize`).
    pub reason: String,
}

impl LayerError {
    /// One line naming the field as `n` does: `{name} {value} is not a valid value: {reason}`.
    pub fn message(&self, n: FieldNames) -> String {
        match &self.field {
            Some((field, value)) => {
                format!("{} {value} is not a valid value: {}", n(field), self.reason)
            }
            None => format!("invalid workload parameters: {}", self.reason),
        }
    }
}

/// The spec `T` from its defaults overlaid by `layers` in order (each a JSON object of the
/// fields it sets, by the spec's field names; null fields set nothing), its
/// [`Layered::DERIVED`] fields computed where no layer sets them, then scaled by `scale`.
/// Check the result with the spec's `validate`.
pub fn assemble<T: Layered>(layers: &[Value], scale: f64) -> Result<T, LayerError> {
    let defaults = match serde_json::to_value(T::default()) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut merged = defaults.clone();
    for (field, _) in T::DERIVED {
        merged.remove(*field);
    }
    overlay(&mut merged, layers);
    for (field, derive) in T::DERIVED {
        if !merged.contains_key(*field) {
            let value = derive(&merged);
            merged.insert(field.to_string(), value);
        }
    }
    let mut spec: T = serde_json::from_value(Value::Object(merged.clone()))
        .map_err(|e| at_fault::<T>(&defaults, &merged, e))?;
    if scale != 1.0 {
        spec.scale(scale);
    }
    Ok(spec)
}

/// The error of `merged`, naming the first field whose value alone, over the defaults, does
/// not deserialize (serde's error of the whole map does not say which field it was).
fn at_fault<T: DeserializeOwned>(
    defaults: &Map<String, Value>,
    merged: &Map<String, Value>,
    error: serde_json::Error,
) -> LayerError {
    for (field, value) in merged {
        if defaults.get(field) == Some(value) {
            continue;
        }
        let mut one = defaults.clone();
        one.insert(field.clone(), value.clone());
        if let Err(e) = serde_json::from_value::<T>(Value::Object(one)) {
            return LayerError {
                field: Some((field.clone(), value.clone())),
                reason: e.to_string(),
            };
        }
    }
    LayerError {
        field: None,
        reason: error.to_string(),
    }
}

/// Lays the non-null fields of each of `layers` (JSON objects, in order) over `merged`.
fn overlay(merged: &mut Map<String, Value>, layers: &[Value]) {
    for layer in layers {
        if let Value::Object(m) = layer {
            for (k, v) in m {
                if !v.is_null() {
                    merged.insert(k.clone(), v.clone());
                }
            }
        }
    }
}
