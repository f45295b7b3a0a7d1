//! Files across machines: a browser download copied from the host to the driver's disk, and
//! a driver's file uploaded to the host and attached to a file input. The bytes always move
//! over the host's authenticated listener; nothing assumes a shared file system.

pub mod download;
pub mod upload;

/// Whether `s` is a download id as Chromium writes it (`8-4-4-4-12` hex digits). Both sides
/// check it: the driver before putting it in a URL, the host before it touches a path.
pub fn is_guid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A local file name for a name a server or page suggested: its last path component, with
/// anything outside `[A-Za-z0-9._ -]` replaced by `_`, no leading dot, at most 120
/// characters; `download` when nothing is left.
pub fn safe_file_name(suggested: &str) -> String {
    let last = suggested.rsplit(['/', '\\']).next().unwrap_or("");
    let mut name: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ' ') {
                c
            } else {
                '_'
            }
        })
        .take(120)
        .collect();
    while name.starts_with('.') || name.starts_with(' ') {
        name.remove(0);
    }
    let name = name.trim_end().to_string();
    if name.is_empty() {
        "download".to_string()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guids_only() {
        assert!(is_guid("ca76e7a0-1851-41cf-ab51-da8ad0d3a891"));
        for bad in [
            "",
            "../etc/passwd",
            "ca76e7a0-1851-41cf-ab51-da8ad0d3a89",
            "ca76e7a0-1851-41cf-ab51-da8ad0d3a8911",
            "ca76e7a0/1851-41cf-ab51-da8ad0d3a891",
            "ca76e7a0-1851-41cf-ab51-da8ad0d3a8.1",
            "ca76e7a0-1851-41cf-ab51-da8ad0d3a8%2",
            "ca76e7a0x1851-41cf-ab51-da8ad0d3a891",
        ] {
            assert!(!is_guid(bad), "{bad}");
        }
    }

    #[test]
    fn file_names_stay_in_their_directory() {
        assert_eq!(safe_file_name("report.csv"), "report.csv");
        assert_eq!(safe_file_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_file_name("a\\b\\..\\c.txt"), "c.txt");
        assert_eq!(safe_file_name(".."), "download");
        assert_eq!(safe_file_name(".bashrc"), "bashrc");
        assert_eq!(safe_file_name(""), "download");
        assert_eq!(safe_file_name("naïve;rm -rf.txt"), "na_ve_rm -rf.txt");
        assert_eq!(safe_file_name(&"x".repeat(300)).len(), 120);
    }
}
