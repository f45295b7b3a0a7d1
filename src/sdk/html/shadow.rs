//! Declarative shadow roots composed into the tree a browser renders (the flat tree).
//!
//! An open `<template shadowrootmode="open">` replaces its host's children: the host's light
//! children move into the `<slot>` they are assigned to (by `slot` name, the unnamed slot
//! taking the rest), an empty slot keeps its fallback content, and light children no slot
//! takes are not rendered. The browser path writes live open shadow roots the same way
//! (`assets/js/flatten.js`), so both paths compose alike. Closed roots stay templates
//! (hidden): a page script cannot read them either.

use std::collections::HashMap;

use ego_tree::NodeId;
use scraper::{Html, Node};

use super::dom::attr_eq;

/// Elements that may host a shadow root (the DOM's `attachShadow` list), besides custom
/// elements (names with a hyphen).
const HOSTS: &[&str] = &[
    "article",
    "aside",
    "blockquote",
    "body",
    "div",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "main",
    "nav",
    "p",
    "section",
    "span",
];

/// Compose every open declarative shadow root of `doc`, outer hosts first (so an outer slot
/// passed into an inner host's light children is filled before the inner one distributes).
pub(crate) fn compose(doc: &mut Html) {
    let roots: Vec<(NodeId, NodeId)> = doc
        .tree
        .nodes()
        .filter(|n| {
            n.value()
                .as_element()
                .is_some_and(|e| e.name() == "template" && attr_eq(e, "shadowrootmode", "open"))
        })
        .filter_map(|t| {
            let host = t.parent()?;
            let name = host.value().as_element()?.name();
            let valid = HOSTS.contains(&name) || name.contains('-');
            // Only the first declarative root of a host attaches.
            let first = host
                .children()
                .find(|c| {
                    c.value().as_element().is_some_and(|e| {
                        e.name() == "template" && e.attr("shadowrootmode").is_some()
                    })
                })
                .map(|c| c.id());
            (valid && first == Some(t.id())).then(|| (host.id(), t.id()))
        })
        .collect();
    for (host, template) in roots {
        compose_one(doc, host, template);
    }
}

fn compose_one(doc: &mut Html, host: NodeId, template: NodeId) {
    let tree = &mut doc.tree;
    let Some(fragment) = tree
        .get(template)
        .and_then(|t| t.first_child())
        .filter(|f| f.value().is_fragment())
        .map(|f| f.id())
    else {
        return;
    };
    let Some(host_ref) = tree.get(host) else {
        return;
    };
    // Light children by the slot they ask for ("" is the unnamed slot).
    let mut assigned: HashMap<String, Vec<NodeId>> = HashMap::new();
    let mut light = Vec::new();
    for c in host_ref.children().filter(|c| c.id() != template) {
        light.push(c.id());
        let slot = match c.value() {
            Node::Element(e) => e.attr("slot").unwrap_or("").to_string(),
            Node::Text(_) => String::new(),
            _ => continue,
        };
        assigned.entry(slot).or_default().push(c.id());
    }
    let slots = slots_of(doc, fragment);
    let tree = &mut doc.tree;
    let mut filled: Vec<String> = Vec::new();
    for (slot, name) in slots {
        if filled.contains(&name) {
            continue;
        }
        let Some(nodes) = assigned.remove(&name) else {
            continue;
        };
        filled.push(name);
        let fallback: Vec<NodeId> = tree
            .get(slot)
            .map(|s| s.children().map(|c| c.id()).collect())
            .unwrap_or_default();
        for f in fallback {
            if let Some(mut f) = tree.get_mut(f) {
                f.detach();
            }
        }
        if let Some(mut s) = tree.get_mut(slot) {
            for n in nodes {
                s.append_id(n);
            }
        }
    }
    // What no slot took is not rendered.
    for n in assigned.into_values().flatten() {
        if let Some(mut n) = tree.get_mut(n) {
            n.detach();
        }
    }
    let shadow: Vec<NodeId> = tree
        .get(fragment)
        .map(|f| f.children().map(|c| c.id()).collect())
        .unwrap_or_default();
    if let Some(mut h) = tree.get_mut(host) {
        for n in shadow {
            h.append_id(n);
        }
    }
    if let Some(mut t) = tree.get_mut(template) {
        t.detach();
    }
    // Light children still attached here were not slotted content (comments and the like).
    for n in light {
        if let Some(mut n) = tree.get_mut(n) {
            if n.parent().map(|p| p.id()) == Some(host) {
                n.detach();
            }
        }
    }
}

/// The `<slot>`s of one shadow tree with their names, in tree order, not looking into
/// nested templates (nested shadow roots compose on their own).
fn slots_of(doc: &Html, fragment: NodeId) -> Vec<(NodeId, String)> {
    let mut out = Vec::new();
    let Some(root) = doc.tree.get(fragment) else {
        return out;
    };
    let mut stack: Vec<ego_tree::NodeRef<'_, Node>> = root.children().rev().collect();
    while let Some(n) = stack.pop() {
        let Some(e) = n.value().as_element() else {
            continue;
        };
        match e.name() {
            "template" => continue,
            "slot" => out.push((n.id(), e.attr("name").unwrap_or("").to_string())),
            _ => {}
        }
        stack.extend(n.children().rev());
    }
    out
}

#[cfg(test)]
mod tests {
    use url::Url;

    use crate::sdk::html::project;

    fn md(html: &str) -> String {
        project(html, &Url::parse("https://x.test/p").unwrap()).content_md
    }

    #[test]
    fn slots_take_their_light_children_and_the_rest_is_not_rendered() {
        let html = "<div id=h><template shadowrootmode=open><h2>Card</h2>\
            <p><slot name=title>no title</slot></p><section><slot></slot></section>\
            <footer><slot name=missing>fallback footer</slot></footer></template>\
            <span slot=title>Named part</span><p>Default part</p>\
            <span slot=nowhere>never shown</span></div>";
        let m = md(html);
        let card = m.find("## Card").unwrap();
        let named = m.find("Named part").unwrap();
        let default = m.find("Default part").unwrap();
        let fallback = m.find("fallback footer").unwrap();
        assert!(card < named && named < default && default < fallback, "{m}");
        assert!(!m.contains("no title") && !m.contains("never shown"), "{m}");
    }

    #[test]
    fn closed_roots_and_invalid_hosts_stay_templates() {
        let m = md(
            "<div><template shadowrootmode=closed><p>closed inside</p></template>\
            <p>light</p></div><a href=/x><template shadowrootmode=open>on a link</template>go</a>",
        );
        assert!(m.contains("light") && !m.contains("closed inside"), "{m}");
        assert!(!m.contains("on a link"), "{m}");
    }

    #[test]
    fn nested_roots_compose_outer_first() {
        let html = "<div><template shadowrootmode=open><x-inner>\
            <template shadowrootmode=open><b>[<slot></slot>]</b></template>\
            <slot></slot></x-inner></template><i>deep light</i></div>";
        let m = md(html);
        assert!(m.contains("[deep light]"), "{m}");
    }
}
