//! What an MCP `fetch` may ask for, on top of [`FetchSpec::validate`].
//!
//! A model that reads untrusted pages fills these arguments, so the fields that name files
//! or programs on the server's machine are not offered: a local file read into a request
//! body would send it to any URL, `@-` would read the protocol channel itself, and a browser
//! binary is a program to run. `out` is kept, as a directory inside the output area, so
//! nothing an MCP call writes lands outside it.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::error::AfError;
use crate::sdk::fetch::FetchSpec;

/// Spec fields an MCP call may not set, with why (the tool error says it).
pub const REFUSED_FIELDS: [(&str, &str); 3] = [
    (
        "browser_bin",
        "names a program to run; start `afhttp mcp` with AFHTTP_BROWSER_BIN instead",
    ),
    (
        "cookie_jar",
        "names a file to read and rewrite; fetches over MCP use no jar unless a profile has one",
    ),
    (
        "ca_cert",
        "names a file on the server's disk; configure the host or the environment instead",
    ),
];

/// Check `spec` against what MCP allows and move `out` into `out_root`.
pub fn admit(spec: &mut FetchSpec, out_root: &Path) -> Result<(), AfError> {
    let set = [
        ("browser_bin", spec.browser_bin.is_some()),
        ("cookie_jar", spec.cookie_jar.is_some()),
        ("ca_cert", spec.ca_cert.is_some()),
    ];
    for (field, is_set) in set {
        if is_set {
            let why = REFUSED_FIELDS
                .iter()
                .find(|(f, _)| *f == field)
                .map(|(_, why)| *why)
                .unwrap_or("is not available over MCP");
            return Err(refused(
                field,
                &format!("{field} is not available over MCP: {why}"),
            ));
        }
    }
    if spec.data.as_deref().is_some_and(|d| d.starts_with('@')) {
        return Err(refused(
            "data",
            "data starting with @ reads a local file (or standard input, the MCP channel); \
             over MCP, data is the literal body",
        ));
    }
    if let Some(f) = spec
        .form
        .iter()
        .find(|f| f.split_once('=').is_some_and(|(_, v)| v.starts_with('@')))
    {
        return Err(refused(
            "form",
            &format!("form field {f:?} uploads a local file; over MCP, form values are literal"),
        ));
    }
    if let Some(out) = spec.out.take() {
        spec.out = Some(inside(&out, out_root)?);
    }
    Ok(())
}

/// `out` as a directory under `root`: a relative path of plain names only.
fn inside(out: &Path, root: &Path) -> Result<PathBuf, AfError> {
    let plain =
        !out.as_os_str().is_empty() && out.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return Err(refused(
            "out",
            &format!(
                "out {} must be a relative directory name inside the output area {} \
                 (no leading /, no ..)",
                out.display(),
                root.display()
            ),
        ));
    }
    Ok(root.join(out))
}

fn refused(field: &str, message: &str) -> AfError {
    AfError::invalid(message.to_string())
        .with_field(field)
        .with_hint("see the fetch tool's input schema (tools/list)")
}

/// The fetch input schema without the refused fields, with `out` described as MCP reads it.
pub fn trim_schema(schema: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for (field, _) in REFUSED_FIELDS {
            props.remove(field);
        }
        if let Some(Value::Object(out)) = props.get_mut("out") {
            out.insert(
                "description".into(),
                Value::String(
                    "Directory for the artifacts, relative to the server's output area \
                     (default: a fresh directory per fetch)."
                        .into(),
                ),
            );
        }
        for field in ["data", "form"] {
            if let Some(Value::Object(p)) = props.get_mut(field) {
                let d = p
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                p.insert(
                    "description".into(),
                    Value::String(format!("{d} Over MCP values are literal (no @file).")),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> FetchSpec {
        FetchSpec::new("http://127.0.0.1/")
    }

    #[test]
    fn refuses_local_files_and_programs() {
        let root = Path::new("/tmp/afhttp-out");
        for (mut s, field) in [
            (
                FetchSpec {
                    browser_bin: Some("/bin/sh".into()),
                    ..spec()
                },
                "browser_bin",
            ),
            (
                FetchSpec {
                    data: Some("@/etc/passwd".into()),
                    ..spec()
                },
                "data",
            ),
            (
                FetchSpec {
                    data: Some("@-".into()),
                    ..spec()
                },
                "data",
            ),
            (
                FetchSpec {
                    form: vec!["f=@/etc/passwd".into()],
                    ..spec()
                },
                "form",
            ),
            (
                FetchSpec {
                    out: Some("../../etc".into()),
                    ..spec()
                },
                "out",
            ),
            (
                FetchSpec {
                    out: Some("/etc".into()),
                    ..spec()
                },
                "out",
            ),
        ] {
            let e = admit(&mut s, root).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{e:?}");
        }
    }

    #[test]
    fn out_lands_in_the_output_area() {
        let mut s = FetchSpec {
            out: Some("run1/page".into()),
            data: Some("a=@b".into()),
            ..spec()
        };
        admit(&mut s, Path::new("/tmp/afhttp-out")).unwrap();
        assert_eq!(
            s.out.as_deref(),
            Some(Path::new("/tmp/afhttp-out/run1/page"))
        );
    }
}
