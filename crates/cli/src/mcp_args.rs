//! The arguments and errors of `tracelight mcp`'s tools, shared by [`crate::mcp_tools`] and
//! [`crate::mcp_slices`] (the bottom of the two: it imports neither).

use crate::input::CliError;
use serde_json::{Map, Value};

/// An error of a call: bad arguments, or input that could not be read (the message names the
/// file).
pub enum ToolError {
    Params(String),
    Input(String),
}

impl From<CliError> for ToolError {
    fn from(e: CliError) -> Self {
        match e {
            CliError::Input(e) => ToolError::Input(e.to_string()),
            CliError::Usage(m) => ToolError::Params(m),
        }
    }
}

/// `key` as a list of paths (one string is a list of one).
pub fn strings(args: &Map<String, Value>, key: &str) -> Result<Vec<String>, ToolError> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ToolError::Params(format!("{key}: a list of paths (strings)")))
            })
            .collect(),
        _ => Err(ToolError::Params(format!(
            "{key} is required: a path or a list of paths"
        ))),
    }
}

/// `key` as a string, required.
pub fn string(args: &Map<String, Value>, key: &str) -> Result<String, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| ToolError::Params(format!("{key} is required (a string)")))
}

/// `limit`: `default` when absent, else an integer from 1 to `max`.
pub fn limit(args: &Map<String, Value>, default: u64, max: u64) -> Result<usize, ToolError> {
    match args.get("limit") {
        None | Some(Value::Null) => Ok(default as usize),
        Some(v) => match v.as_u64() {
            Some(n) if (1..=max).contains(&n) => Ok(n as usize),
            _ => Err(ToolError::Params(format!(
                "limit: an integer from 1 to {max}"
            ))),
        },
    }
}
