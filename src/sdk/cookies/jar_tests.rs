use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

const NOW: i64 = 1_700_000_000;

fn cookie(name: &str, value: &str) -> Cookie {
    Cookie {
        name: name.into(),
        value: value.into(),
        domain: "e.com".into(),
        host_only: true,
        path: "/".into(),
        secure: false,
        http_only: false,
        same_site: None,
        expires_at_unix: None,
        created_at_unix: NOW,
    }
}

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

#[test]
fn store_replaces_and_keeps_creation_time() {
    let mut jar = CookieJar::default();
    jar.store(cookie("a", "1"), NOW);
    let mut newer = cookie("a", "2");
    newer.created_at_unix = NOW + 50;
    jar.store(newer, NOW + 50);
    assert_eq!(jar.cookies.len(), 1);
    assert_eq!(jar.cookies[0].value, "2");
    assert_eq!(jar.cookies[0].created_at_unix, NOW);
    // Different path, domain-ness or domain: separate cookies.
    let mut p = cookie("a", "3");
    p.path = "/x".into();
    jar.store(p, NOW);
    let mut d = cookie("a", "4");
    d.host_only = false;
    jar.store(d, NOW);
    assert_eq!(jar.cookies.len(), 3);
}

#[test]
fn expired_store_deletes_only_the_match() {
    let mut jar = CookieJar::default();
    jar.store(cookie("a", "1"), NOW);
    jar.store(cookie("b", "1"), NOW);
    let mut del = cookie("a", "");
    del.expires_at_unix = Some(0);
    jar.store(del.clone(), NOW);
    assert_eq!(jar.cookies.len(), 1);
    assert_eq!(jar.cookies[0].name, "b");
    // Deleting something absent stores nothing.
    del.name = "zzz".into();
    jar.store(del, NOW);
    assert_eq!(jar.cookies.len(), 1);
}

#[test]
fn store_collapses_hand_edited_duplicates() {
    let mut jar = CookieJar {
        cookies: vec![cookie("a", "1"), cookie("b", "1"), cookie("a", "2")],
    };
    jar.store(cookie("a", "3"), NOW);
    let names: Vec<_> = jar.cookies.iter().map(|c| (&*c.name, &*c.value)).collect();
    assert_eq!(names, [("a", "3"), ("b", "1")]);
}

#[test]
fn set_cookie_headers_round_trip_through_the_jar() {
    let u = url("https://www.e.com/app/x");
    let mut jar = CookieJar::default();
    let n = jar.store_set_cookie_headers(
        [
            "sid=1; Path=/; HttpOnly",
            "pref=dark; Domain=e.com; Max-Age=3600",
            "bogus",
            "tmp=1; Max-Age=10",
        ],
        &u,
        NOW,
    );
    assert_eq!(n, 3);
    assert_eq!(jar.cookies.len(), 3);
    jar.store_set_cookie_headers(["tmp=; Max-Age=0"], &u, NOW + 1);
    assert_eq!(jar.cookies.len(), 2);
    let sel = jar.select_for_url(&url("https://www.e.com/app/y"), NOW + 2);
    assert_eq!(sel.header.as_deref(), Some("pref=dark; sid=1"));
    let sel = jar.select_for_url(&url("https://api.e.com/app/z"), NOW + 2);
    assert_eq!(sel.header.as_deref(), Some("pref=dark"));
    let sel = jar.select_for_url(&url("https://api.e.com/app/z"), NOW + 4000);
    assert_eq!(sel.header, None);
}

#[test]
fn purge_keeps_session_cookies() {
    let mut jar = CookieJar::default();
    jar.store(cookie("session", "1"), NOW);
    let mut p = cookie("persist", "1");
    p.expires_at_unix = Some(NOW + 10);
    jar.store(p, NOW);
    jar.purge_expired(NOW + 10);
    assert_eq!(jar.cookies.len(), 1);
    assert_eq!(jar.cookies[0].name, "session");
}

#[test]
fn file_format_and_permissions() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("new/dir/cookies.jar.json");
    update_jar_file(&path, |jar| {
        let mut c = cookie("a", "1");
        c.same_site = Some(super::super::SameSite::Lax);
        jar.store(c, NOW);
    })
    .unwrap();
    assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
    assert_eq!(
        fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777,
        0o700
    );
    let lock = tmp.path().join("new/dir/cookies.jar.json.lock");
    assert_eq!(fs::metadata(&lock).unwrap().mode() & 0o777, 0o600);
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("{\n  \"schema_version\": 1,\n  \"cookies\": ["),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["cookies"][0],
        serde_json::json!({
            "name": "a", "value": "1", "domain": "e.com", "host_only": true, "path": "/",
            "secure": false, "http_only": false, "same_site": "Lax", "created_at_unix": NOW
        })
    );
    let jar = read_jar_file(&path).unwrap();
    assert_eq!(jar.cookies.len(), 1);
    assert_eq!(CookieJar::load(&path).unwrap(), jar);
}

#[test]
fn missing_file_is_empty_and_read_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("absent/jar.json");
    assert!(read_jar_file(&path).unwrap().cookies.is_empty());
    assert!(CookieJar::load(&path).unwrap().cookies.is_empty());
    assert!(!tmp.path().join("absent").exists());
    let blank = tmp.path().join("blank.json");
    fs::write(&blank, "\n").unwrap();
    assert!(CookieJar::load(&blank).unwrap().cookies.is_empty());
}

#[test]
fn corrupt_jar_is_io_error_and_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    for garbage in [
        &b"{not json"[..],
        b"[]",
        b"{\"cookies\":[]}",
        b"{\"schema_version\":2,\"cookies\":[]}",
        b"{\"schema_version\":1,\"cookies\":[{\"name\":1}]}",
    ] {
        let path = tmp.path().join("jar.json");
        fs::write(&path, garbage).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let mut called = false;
        let err = update_jar_file(&path, |_| called = true).unwrap_err();
        assert_eq!(err.code, ErrorCode::IoError, "{err}");
        assert!(!called);
        assert_eq!(CookieJar::load(&path).unwrap_err().code, ErrorCode::IoError);
        assert_eq!(read_jar_file(&path).unwrap_err().code, ErrorCode::IoError);
        assert_eq!(fs::read(&path).unwrap(), garbage);
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o644);
    }
}

#[test]
fn directory_or_bad_symlink_is_invalid_argument() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    fs::create_dir(&dir).unwrap();
    let invalid = |p: &Path| {
        assert_eq!(
            update_jar_file(p, |_| ()).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            read_jar_file(p).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    };
    invalid(&dir);
    let to_dir = tmp.path().join("to_dir");
    std::os::unix::fs::symlink(&dir, &to_dir).unwrap();
    invalid(&to_dir);
    let dangling = tmp.path().join("dangling");
    std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).unwrap();
    invalid(&dangling);
}

#[test]
fn symlink_to_file_updates_the_target() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real.json");
    update_jar_file(&real, |jar| jar.store(cookie("a", "1"), NOW)).unwrap();
    let link = tmp.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    update_jar_file(&link, |jar| jar.store(cookie("b", "1"), NOW)).unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(read_jar_file(&real).unwrap().cookies.len(), 2);
}

#[test]
fn update_returns_the_closure_value_and_purges() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("jar.json");
    let n = update_jar_file(&path, |jar| {
        jar.store(cookie("keep", "1"), NOW);
        let mut old = cookie("old", "1");
        old.expires_at_unix = Some(1);
        jar.cookies.push(old);
        jar.cookies.len()
    })
    .unwrap();
    assert_eq!(n, 2);
    let jar = read_jar_file(&path).unwrap();
    assert_eq!(jar.cookies.len(), 1);
    assert_eq!(jar.cookies[0].name, "keep");
}

#[test]
fn relative_path_uses_current_directory_parent() {
    assert_eq!(
        split_target(Path::new("jar.json")).unwrap(),
        (PathBuf::from("."), "jar.json".to_string())
    );
    assert_eq!(
        split_target(Path::new("/a/b.json")).unwrap(),
        (PathBuf::from("/a"), "b.json".to_string())
    );
}

#[test]
fn concurrent_writers_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("shared.jar.json");
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..20 {
                    update_jar_file(&path, |jar| {
                        jar.store(cookie(&format!("c{t}"), &i.to_string()), NOW);
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let jar = read_jar_file(&path).unwrap();
    let mut names: Vec<_> = jar.cookies.iter().map(|c| c.name.clone()).collect();
    names.sort();
    assert_eq!(names, (0..8).map(|t| format!("c{t}")).collect::<Vec<_>>());
    assert!(jar.cookies.iter().all(|c| c.value == "19"));
    // No temporary files left behind: just the jar and its lock.
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 2);
}
