//! `observation.json` through the built binary: `afhttp fetch URL --render always --want
//! observation` with a real Chromium, against the `/obs/*` fixture pages.

use serde_json::Value;

use crate::support::routes_observation::{
    EDITABLE_SECRET, PREFILLED_SECRET, TEXTAREA_SECRET, TYPED_SECRET,
};
use crate::support::{Fixture, FixtureServer, Run};

const CHROMIUM: &str = "/usr/bin/chromium";

/// One fetch's observation: the parsed document, its bytes, and the run that wrote it.
struct Obs {
    run: Run,
    doc: Value,
    bytes: Vec<u8>,
    _fx: Fixture,
}

impl Obs {
    fn nodes(&self) -> &Vec<Value> {
        self.doc["nodes"].as_array().unwrap()
    }

    /// The one node with this accessible name.
    fn named(&self, name: &str) -> &Value {
        let found: Vec<&Value> = self.nodes().iter().filter(|n| n["name"] == name).collect();
        assert_eq!(found.len(), 1, "{name:?} in {:#}", self.doc);
        found[0]
    }

    fn by_ref(&self, r: &Value) -> &Value {
        self.nodes()
            .iter()
            .find(|n| &n["ref"] == r)
            .unwrap_or_else(|| panic!("no node {r} in {:#}", self.doc))
    }

    fn warning_codes(&self) -> Vec<String> {
        self.run.result()["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["code"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

/// An observation of a well-formed page: no element may have failed.
fn observe(url: &str) -> Obs {
    let o = observe_any(url);
    assert_eq!(o.doc["element_errors"], 0, "{:#}", o.doc);
    o
}

fn observe_any(url: &str) -> Obs {
    // Shares the lock of the in-process browser tests: one Chromium at a time on 2 cores.
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let out = fx.path().join("out");
    let run = fx
        .cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", CHROMIUM)
        .args([
            "fetch",
            url,
            "--render",
            "always",
            "--want",
            "observation",
            "--wait",
            "load",
            "--out",
        ])
        .arg(&out)
        .run();
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    let bytes = std::fs::read(run.artifact_path("observation_file")).unwrap();
    let doc: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(doc["schema_version"], 1, "{doc:#}");
    Obs {
        run,
        doc,
        bytes,
        _fx: fx,
    }
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn observation_caps_nodes_and_says_so() {
    let srv = FixtureServer::start();
    let o = observe(&srv.url("/obs/many"));
    assert_eq!(o.nodes().len(), 100);
    let t = &o.doc["truncated"];
    assert_eq!(t["reason"], "max_nodes", "{t}");
    assert_eq!(t["max_nodes"], 100);
    assert_eq!(t["max_scanned"], 2000);
    assert_eq!(t["emitted"], 100);
    assert!(
        num(&t["scanned"]) >= 100.0 && num(&t["scanned"]) <= 2000.0,
        "{t}"
    );
    // Refs are assigned in order; the first hundred buttons are the ones kept.
    assert_eq!(o.nodes()[0]["ref"], "obs-1");
    assert_eq!(o.nodes()[0]["name"], "Button 1");
    assert_eq!(o.nodes()[99]["ref"], "obs-100");
    assert_eq!(o.nodes()[99]["name"], "Button 100");
    assert_eq!(o.nodes()[0]["selector_hint"]["selector"], "#b1");
    assert_eq!(o.nodes()[0]["selector_hint"]["unique"], true);
}

#[test]
fn observation_scan_cap_stops_the_walk() {
    let srv = FixtureServer::start();
    let o = observe(&srv.url("/obs/scan"));
    let t = &o.doc["truncated"];
    assert_eq!(t["reason"], "max_scanned", "{t}");
    assert_eq!(t["scanned"], 2000);
    assert!(
        o.nodes().iter().all(|n| n["name"] != "Late"),
        "the button past the scan cap was reached: {:#}",
        o.doc
    );
}

#[test]
fn observation_never_contains_input_values() {
    let srv = FixtureServer::start();
    let o = observe(&srv.url("/obs/secrets"));
    let text = String::from_utf8_lossy(&o.bytes);
    for secret in [
        PREFILLED_SECRET,
        TYPED_SECRET,
        TEXTAREA_SECRET,
        EDITABLE_SECRET,
    ] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    let pw = o.named("Password");
    assert_eq!(pw["input_type"], "password");
    assert_eq!(pw["role"], "textbox");
    assert_eq!(pw["text"], "");
    assert_eq!(
        pw["value_redacted"],
        serde_json::json!({"present": true, "length": PREFILLED_SECRET.len()})
    );
    assert!(pw.get("value").is_none(), "{pw}");
    let typed = o.named("Typed");
    assert_eq!(typed["value_redacted"]["length"], TYPED_SECRET.len());
    let note = o.named("Note");
    assert_eq!(note["tag"], "textarea");
    assert_eq!(note["value_redacted"]["present"], true);
    let ed = o.named("Editor");
    assert_eq!(ed["role"], "textbox");
    assert_eq!(ed["actions"], serde_json::json!(["click", "type"]));
    assert_eq!(ed["value_redacted"]["length"], EDITABLE_SECRET.len());
    let empty = o.named("Empty");
    assert_eq!(
        empty["value_redacted"],
        serde_json::json!({"present": false, "length": 0})
    );
}

#[test]
fn an_unlabelled_contenteditable_is_named_by_its_text() {
    let srv = FixtureServer::start();
    let o = observe(&srv.url("/obs/editable"));
    let draft = o.named("Draft of the weekly note");
    assert_eq!(draft["role"], "textbox");
    assert_eq!(draft["actions"], serde_json::json!(["click", "type"]));
    // A label still wins over the content.
    let body = o.named("Body");
    assert_eq!(body["role"], "textbox");
}

#[test]
fn observation_walks_open_shadow_roots_with_chained_hints() {
    let srv = FixtureServer::start();
    let o = observe(&srv.url("/obs/shadow"));
    let go = o.named("Shadow go");
    assert_eq!(go["frame_id"], "main");
    assert_eq!(go["role"], "button");
    assert_eq!(
        go["selector_hint"]["selector"],
        "#widget >> shadow >> #inner-go"
    );
    assert_eq!(go["selector_hint"]["unique"], true);
    let field = o.named("Shadow field");
    assert_eq!(field["role"], "textbox");
    assert_eq!(
        field["selector_hint"]["selector"],
        "#widget >> shadow >> input[placeholder=\"Shadow field\"]"
    );
    // Hosts without ids get structural chains. "button" inside each root also matches the
    // nested one, so those chains are flagged as not unique; the nested ones are unique.
    let twins: Vec<&Value> = o.nodes().iter().filter(|n| n["name"] == "Twin").collect();
    assert_eq!(twins.len(), 2, "{:#}", o.doc);
    assert_ne!(twins[0]["selector_hint"], twins[1]["selector_hint"]);
    for t in twins {
        let sel = t["selector_hint"]["selector"].as_str().unwrap();
        assert!(sel.ends_with(" >> shadow >> button"), "{sel}");
        assert_eq!(t["selector_hint"]["unique"], false, "{t}");
    }
    let nested: Vec<&Value> = o.nodes().iter().filter(|n| n["name"] == "Nested").collect();
    assert_eq!(nested.len(), 2, "{:#}", o.doc);
    for n in nested {
        let sel = n["selector_hint"]["selector"].as_str().unwrap();
        assert!(sel.ends_with(" >> shadow >> div > button"), "{sel}");
        assert_eq!(n["selector_hint"]["unique"], true, "{n}");
    }
}

#[test]
fn observation_descends_same_origin_frames_with_offsets() {
    let srv = FixtureServer::start();
    let o = observe(&srv.url("/obs/frame"));
    let iframe = o.named("Child frame");
    assert_eq!(iframe["role"], "iframe");
    assert_eq!(iframe["src"], srv.url("/obs/frame-inner"));
    let child_id = iframe["frame_ref"].as_str().unwrap();
    assert_ne!(child_id, "main");
    let frames = o.doc["frames"].as_array().unwrap();
    assert_eq!(frames[0]["frame_id"], "main");
    let child = frames
        .iter()
        .find(|f| f["frame_id"] == child_id)
        .unwrap_or_else(|| panic!("{:#}", o.doc));
    assert_eq!(child["url"], srv.url("/obs/frame-inner"));
    assert_eq!(child["parent_frame_id"], "main");
    assert_eq!(child["same_origin"], true);
    assert_eq!(child["iframe_ref"], iframe["ref"]);

    let inner = o.named("Inner button");
    assert_eq!(inner["frame_id"], child_id);
    assert_eq!(inner["selector_hint"]["selector"], "#inner-btn");
    assert_eq!(inner["selector_hint"]["unique"], true);
    // Content box of the iframe at (60+4+6, 120+4+6); the button at (10, 20) inside it.
    assert_eq!(iframe["bbox"]["x"], 60);
    assert_eq!(iframe["bbox"]["y"], 120);
    assert_eq!(inner["bbox"]["x"], 80, "{inner}");
    assert_eq!(inner["bbox"]["y"], 150, "{inner}");
    assert_eq!(inner["bbox"]["width"], 80);
    let link = o.named("Inner link");
    assert_eq!(link["href"], srv.url("/static"));
    assert_eq!(link["frame_id"], child_id);
}

#[test]
fn observation_shows_cross_origin_frames_only_as_a_box() {
    let srv = FixtureServer::start();
    let other = FixtureServer::start();
    let o = observe(&srv.url(&format!("/obs/cross?port={}", other.port())));
    assert!(
        other.hits("/obs/frame-inner") >= 1,
        "the cross-origin frame never loaded"
    );
    let iframe = o.named("Other origin");
    assert_eq!(iframe["role"], "iframe");
    assert_eq!(iframe["actions"], serde_json::json!([]));
    assert_eq!(iframe["bbox"]["x"], 30);
    assert_eq!(iframe["bbox"]["y"], 80);
    assert_eq!(iframe["bbox"]["width"], 300);
    let frame_id = iframe["frame_ref"].as_str().unwrap();
    let frame = o.doc["frames"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["frame_id"] == frame_id)
        .unwrap();
    assert_eq!(frame["same_origin"], false);
    assert_eq!(frame["url"], other.url("/obs/frame-inner"));
    assert!(
        o.nodes().iter().all(|n| n["frame_id"] != frame_id),
        "nodes from inside a cross-origin frame: {:#}",
        o.doc
    );
    let text = String::from_utf8_lossy(&o.bytes);
    assert!(!text.contains("Inner button"), "{text}");
    assert_eq!(o.nodes().len(), 2, "{:#}", o.doc);
}

#[test]
fn observation_reports_forms_states_pointer_and_focus() {
    let srv = FixtureServer::start();
    let o = observe(&srv.url("/obs/form"));
    assert!(o.doc["truncated"].is_null());
    let forms = o.doc["forms"].as_array().unwrap();
    assert_eq!(forms.len(), 2, "{:#}", o.doc);
    let order = &forms[0];
    assert_eq!(order["id"], "order");
    assert_eq!(order["frame_id"], "main");
    assert_eq!(order["action"], srv.url("/echo?x=1"));
    assert_eq!(order["method"], "POST");
    assert_eq!(order["selector_hint"]["selector"], "#order");
    let owned: Vec<&Value> = order["field_refs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &o.by_ref(r)["name"])
        .collect();
    assert_eq!(
        owned,
        [
            "Query",
            "Agree",
            "News",
            "Size",
            "Order",
            "Unavailable",
            "Extra"
        ],
        "{order}"
    );
    assert_eq!(forms[1]["method"], "GET");
    assert_eq!(forms[1]["action"], srv.url("/obs/form"));

    let q = o.named("Query");
    assert_eq!(q["form_ref"], order["ref"]);
    assert_eq!(q["focused"], true);
    assert_eq!(o.doc["focused_ref"], q["ref"]);
    assert_eq!(o.nodes().iter().filter(|n| n["focused"] == true).count(), 1);
    assert_eq!(o.named("Agree")["checked"], true);
    assert_eq!(
        o.named("Agree")["actions"],
        serde_json::json!(["click", "toggle"])
    );
    assert_eq!(o.named("News")["checked"], false);
    let size = o.named("Size");
    assert_eq!(size["role"], "combobox");
    assert_eq!(size["actions"], serde_json::json!(["select"]));
    assert_eq!(
        size["selected_options"],
        serde_json::json!([{"index": 1, "text": "Medium"}])
    );
    let go = o.named("Order");
    assert_eq!(go["enabled"], true);
    assert_eq!(go["actions"], serde_json::json!(["click", "submit"]));
    let off = o.named("Unavailable");
    assert_eq!(off["enabled"], false);
    assert_eq!(off["role"], "button");
    assert_eq!(o.named("Extra")["form_ref"], order["ref"]);
    assert_eq!(o.named("More")["expanded"], false);
    assert_eq!(o.named("Static link")["href"], srv.url("/static"));

    // The pointer card comes after every native control, once (not once per child).
    let card = o.named("Card title inherits");
    assert_eq!(card["role"], "generic");
    assert_eq!(card["tag"], "div");
    assert_eq!(card["actions"], serde_json::json!(["click"]));
    assert_eq!(card["selector_hint"]["selector"], "#card");
    assert_eq!(o.nodes().last().unwrap()["ref"], card["ref"]);
    assert!(o.nodes().iter().all(|n| n["name"] != "not clickable"));
    let vp = &o.doc["viewport"];
    assert!(num(&vp["width"]) > 0.0 && num(&vp["height"]) > 0.0);
    assert_eq!(vp["device_scale_factor"], 1);
}

/// Every key a node or the document may carry; an intent label would be a new key.
const DOC_KEYS: &[&str] = &[
    "schema_version",
    "url",
    "title",
    "viewport",
    "frames",
    "nodes",
    "forms",
    "focused_ref",
    "truncated",
    "element_errors",
];
const NODE_KEYS: &[&str] = &[
    "ref",
    "frame_id",
    "tag",
    "role",
    "name",
    "text",
    "visible",
    "enabled",
    "focused",
    "bbox",
    "actions",
    "input_type",
    "checked",
    "selected",
    "expanded",
    "selected_options",
    "required",
    "readonly",
    "value_redacted",
    "href",
    "src",
    "action",
    "frame_ref",
    "form_ref",
    "selector_hint",
];

#[test]
fn observation_names_are_mechanical_and_carry_no_intent_labels() {
    let srv = FixtureServer::start();
    let o = observe(&srv.url("/obs/names"));
    for k in o.doc.as_object().unwrap().keys() {
        assert!(DOC_KEYS.contains(&k.as_str()), "unexpected key {k}");
    }
    for n in o.nodes() {
        for k in n.as_object().unwrap().keys() {
            assert!(NODE_KEYS.contains(&k.as_str()), "unexpected key {k} in {n}");
        }
    }
    let text = String::from_utf8_lossy(&o.bytes).to_lowercase();
    for word in [
        "login",
        "log in",
        "captcha",
        "important",
        "best",
        "paywall",
        "intent",
        "likely",
        "score",
        "primary",
    ] {
        assert!(!text.contains(word), "{word:?} in {text}");
    }
    // aria-labelledby beats aria-label; a wrapping label beats a placeholder.
    assert_eq!(o.named("Your handle")["input_type"], "text");
    assert_eq!(o.named("Secret phrase")["input_type"], "password");
    assert!(o.named("Placeholder only")["role"] == "textbox");
    assert!(o.named("Title only")["role"] == "textbox");
    assert_eq!(o.named("Verify you are human")["role"], "checkbox");
    assert_eq!(
        o.named("Sign in")["actions"],
        serde_json::json!(["click", "submit"])
    );
    assert_eq!(o.named("Logo alt")["href"], srv.url("/static"));
    assert_eq!(o.named("Value label")["role"], "button");
    assert_eq!(o.named("Forgot your password?")["role"], "link");
    assert_eq!(o.doc["title"], "Welcome back");
    // No observation warning; a page still busy at capture on a loaded machine is a
    // timing fact, not an observation problem.
    let codes: Vec<_> = o
        .warning_codes()
        .into_iter()
        .filter(|c| c != "network_not_idle")
        .collect();
    assert!(codes.is_empty(), "{codes:?}");
}

#[test]
fn observation_empty_warns_only_without_title_and_nodes() {
    let srv = FixtureServer::start();
    let blank = observe(&srv.url("/obs/blank"));
    assert!(blank.nodes().is_empty());
    assert!(
        blank
            .warning_codes()
            .contains(&"observation_empty".to_string()),
        "{:?}",
        blank.warning_codes()
    );
    let plain = observe(&srv.url("/obs/plain"));
    assert!(plain.nodes().is_empty());
    assert_eq!(plain.doc["title"], "Plain");
    assert!(
        !plain
            .warning_codes()
            .contains(&"observation_empty".to_string()),
        "{:?}",
        plain.warning_codes()
    );
}

#[test]
fn observation_survives_hostile_pages() {
    let srv = FixtureServer::start();
    let o = observe_any(&srv.url("/obs/weird"));
    // Only the button whose geometry throws is lost, and the loss is counted.
    assert_eq!(o.doc["element_errors"], 1, "{:#}", o.doc);
    assert!(o.nodes().iter().all(|n| n["name"] != "Throws"));
    assert_eq!(o.doc["title"], "Weird");
    let form = &o.doc["forms"][0];
    assert_eq!(form["id"], "w");
    assert_eq!(form["action"], srv.url("/echo"));
    assert_eq!(form["method"], "POST");
    assert_eq!(form["field_refs"].as_array().unwrap().len(), 3, "{form}");
    for name in ["Digit id", "Quoted id"] {
        let hint = &o.named(name)["selector_hint"];
        assert_eq!(hint["unique"], true, "{name}: {hint}");
        assert!(
            hint["selector"].as_str().unwrap().starts_with('#'),
            "{hint}"
        );
    }
    let svg = o.named("SVG link");
    assert_eq!(svg["role"], "link");
    assert_eq!(svg["href"], srv.url("/static"));
}
