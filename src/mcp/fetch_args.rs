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

/// Hex digits of a default artifact directory's name: short, because the answer names the
/// directory in each `read_artifact` call it spells out (8 hex digits are 5 o200k tokens, a
/// 32-digit request id 21), and random, so names are not guessed.
const OUT_NAME_HEX: usize = 8;

/// A fresh artifact directory (0700) under `root` for a fetch that did not name one, created
/// here so two fetches never share it (a name already taken is drawn again).
pub fn fresh_out(root: &Path) -> Result<PathBuf, AfError> {
    crate::fsutil::ensure_owned_private_dir(root)?;
    let mut last = None;
    for _ in 0..16 {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let dir = root.join(&id[..OUT_NAME_HEX]);
        if std::fs::symlink_metadata(&dir).is_ok() {
            continue;
        }
        match crate::fsutil::create_fresh_private_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        AfError::invalid(format!(
            "no free artifact directory name under {}",
            root.display()
        ))
    }))
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

    #[test]
    fn a_default_directory_is_fresh_private_and_short() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("out");
        let a = fresh_out(&root).unwrap();
        let b = fresh_out(&root).unwrap();
        assert_ne!(a, b);
        for d in [&a, &b] {
            assert_eq!(d.parent(), Some(root.as_path()));
            let name = d.file_name().unwrap().to_str().unwrap();
            assert_eq!(name.len(), OUT_NAME_HEX, "{name}");
            assert!(name.bytes().all(|c| c.is_ascii_hexdigit()), "{name}");
            let mode = std::fs::metadata(d).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
    }

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
