//! The build context: a tar made in memory, never a directory on disk.

use std::path::Path;

use crate::error::AfError;
use crate::sdk::documents::pdf::READER_EXE;

/// Where the image's `afhttp` binary comes from.
#[derive(Debug, Clone)]
pub enum BinarySource {
    /// The running executable, copied into the context (stage `prebuilt`).
    Running,
    /// A source tree compiled inside the build (stage `runtime`).
    SourceTree(std::path::PathBuf),
}

impl BinarySource {
    /// The Dockerfile stage that produces the final image for this source.
    pub fn target(&self) -> &'static str {
        match self {
            BinarySource::Running => "prebuilt",
            BinarySource::SourceTree(_) => "runtime",
        }
    }
}

/// Files the image needs besides the binary, embedded in this executable.
const EMBEDDED: &[(&str, &str)] = &[
    ("image/Dockerfile", super::DOCKERFILE),
    ("kasmvnc/kasmvnc.yaml", super::KASMVNC_CONFIG),
];

/// Top-level entries of a source tree that never belong in a build context.
const SKIP_DIRS: &[&str] = &["target", ".git", "node_modules", ".ci"];

/// The context tar: `image/Dockerfile` plus the binary or the source tree.
pub fn build(source: &BinarySource) -> Result<Vec<u8>, AfError> {
    let mut tar = tar::Builder::new(Vec::new());
    tar.follow_symlinks(false);
    match source {
        BinarySource::Running => {
            let exe = std::env::current_exe()
                .map_err(|e| AfError::io("locate the running afhttp executable", &e))?;
            prebuilt(&mut tar, &exe)?;
        }
        BinarySource::SourceTree(dir) => {
            if !dir.join("Cargo.toml").is_file() || !dir.join("src").is_dir() {
                return Err(AfError::invalid(format!(
                    "--from-source {}: not an afhttp source tree (no Cargo.toml and src/)",
                    dir.display()
                )));
            }
            append_tree(&mut tar, dir)?;
            // The tree's own files win; an older tree gets this binary's.
            for (path, text) in EMBEDDED {
                if !dir.join(path).is_file() {
                    append_bytes(&mut tar, path, text.as_bytes(), 0o644)?;
                }
            }
        }
    }
    tar.into_inner()
        .map_err(|e| AfError::io("finish the build context", &e))
}

/// The `prebuilt` stage's context: `exe` as `afhttp`, the PDF reader the fetch runs as a
/// child (it lives beside `exe`), and the embedded files.
fn prebuilt(tar: &mut tar::Builder<Vec<u8>>, exe: &Path) -> Result<(), AfError> {
    for (path, text) in EMBEDDED {
        append_bytes(tar, path, text.as_bytes(), 0o644)?;
    }
    let bytes =
        std::fs::read(exe).map_err(|e| AfError::io(format_args!("read {}", exe.display()), &e))?;
    append_bytes(tar, "afhttp", &bytes, 0o755)?;
    let reader = exe.with_file_name(READER_EXE);
    let bytes = std::fs::read(&reader).map_err(|e| {
        AfError::io(
            format_args!(
                "read {} (the PDF reader, installed beside afhttp)",
                reader.display()
            ),
            &e,
        )
    })?;
    append_bytes(tar, READER_EXE, &bytes, 0o755)
}

fn append_bytes(
    tar: &mut tar::Builder<Vec<u8>>,
    path: &str,
    bytes: &[u8],
    mode: u32,
) -> Result<(), AfError> {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(mode);
    header.set_mtime(0);
    header.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut header, path, bytes)
        .map_err(|e| AfError::io(format_args!("add {path} to the build context"), &e))
}

fn append_tree(tar: &mut tar::Builder<Vec<u8>>, dir: &Path) -> Result<(), AfError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| AfError::io(format_args!("read {}", dir.display()), &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| AfError::io(format_args!("read {}", dir.display()), &e))?;
        let name = entry.file_name();
        if SKIP_DIRS.iter().any(|s| name == *s) {
            continue;
        }
        let path = entry.path();
        let result = if path.is_dir() {
            tar.append_dir_all(&name, &path)
        } else {
            tar.append_path_with_name(&path, &name)
        };
        result
            .map_err(|e| AfError::io(format_args!("add {} to the context", path.display()), &e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(tar_bytes: &[u8]) -> Vec<(String, u32)> {
        let mut a = tar::Archive::new(tar_bytes);
        a.entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let mode = e.header().mode().unwrap();
                (e.path().unwrap().to_string_lossy().into_owned(), mode)
            })
            .collect()
    }

    #[test]
    fn running_binary_context_has_executable_reader_and_dockerfile() {
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join("afhttp");
        std::fs::write(&exe, "bin").unwrap();
        let mut tar = tar::Builder::new(Vec::new());
        // Without the reader beside it, the context is refused, saying which file is missing.
        let e = prebuilt(&mut tar, &exe).unwrap_err();
        assert!(e.message.contains(READER_EXE), "{}", e.message);
        std::fs::write(d.path().join(READER_EXE), "reader").unwrap();
        let mut tar = tar::Builder::new(Vec::new());
        prebuilt(&mut tar, &exe).unwrap();
        let n = names(&tar.into_inner().unwrap());
        assert!(n.contains(&("afhttp".to_string(), 0o755)), "{n:?}");
        assert!(n.contains(&(READER_EXE.to_string(), 0o755)), "{n:?}");
        assert!(n.iter().any(|(p, _)| p == "image/Dockerfile"), "{n:?}");
        assert!(n.iter().any(|(p, _)| p == "kasmvnc/kasmvnc.yaml"), "{n:?}");
    }

    #[test]
    fn source_tree_skips_target_and_git() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Cargo.toml"), "[package]\n").unwrap();
        for sub in ["src", "target/debug", ".git"] {
            std::fs::create_dir_all(d.path().join(sub)).unwrap();
        }
        std::fs::write(d.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(d.path().join("target/debug/big"), "x").unwrap();
        let n = names(&build(&BinarySource::SourceTree(d.path().into())).unwrap());
        assert!(n.iter().any(|(p, _)| p == "src/main.rs"), "{n:?}");
        assert!(n.iter().any(|(p, _)| p == "image/Dockerfile"), "{n:?}");
        assert!(!n.iter().any(|(p, _)| p.starts_with("target")), "{n:?}");
    }

    #[test]
    fn not_a_source_tree_is_invalid() {
        let d = tempfile::tempdir().unwrap();
        let e = build(&BinarySource::SourceTree(d.path().into())).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::InvalidArgument);
    }
}
