//! The cookie-jar reader: what a jar file (`cookie_jar_file`) holds, read as a user would.

use std::path::Path;

use serde_json::Value;

/// The cookies of the jar at `path`, in file order.
pub fn jar_cookies(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    v["cookies"]
        .as_array()
        .unwrap_or_else(|| panic!("{} has no cookies array: {v}", path.display()))
        .clone()
}

/// The names of the cookies in the jar at `path`, in file order.
pub fn jar_names(path: &Path) -> Vec<String> {
    jar_cookies(path)
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}
