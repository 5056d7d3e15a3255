//! The report model as JSON, for scripts: the model itself, pretty-printed.

use anyhow::Result;

use super::Renderer;
use crate::report::model::Report;

/// The JSON renderer: the model as it is serialized, one trailing newline.
pub struct Json;

impl Renderer for Json {
    fn render(&self, report: &Report) -> Result<String> {
        Ok(serde_json::to_string_pretty(report)? + "\n")
    }
}
