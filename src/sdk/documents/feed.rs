//! RSS (0.9x, 1.0, 2.0) and Atom: the feed's title and items (title, link, date).

use roxmltree::{Document, Node};
use serde_json::{json, Value};

/// One feed item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Item title.
    pub title: Option<String>,
    /// Item link.
    pub link: Option<String>,
    /// `pubDate`, `dc:date`, `published` or `updated`, as written.
    pub date: Option<String>,
}

/// A parsed feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feed {
    /// `rss` or `atom`.
    pub format: &'static str,
    /// Feed title.
    pub title: Option<String>,
    /// Feed link.
    pub link: Option<String>,
    /// Items in document order.
    pub items: Vec<Item>,
}

fn child<'a>(n: Node<'a, 'a>, name: &str) -> Option<Node<'a, 'a>> {
    n.children()
        .find(|c| c.is_element() && c.tag_name().name() == name)
}

fn text_of(n: Node<'_, '_>) -> Option<String> {
    let t: String = n
        .descendants()
        .filter(Node::is_text)
        .filter_map(|t| t.text())
        .collect();
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

fn child_text(n: Node<'_, '_>, names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|name| child(n, name).and_then(text_of))
}

fn atom_link(n: Node<'_, '_>) -> Option<String> {
    let links: Vec<Node> = n
        .children()
        .filter(|c| c.is_element() && c.tag_name().name() == "link")
        .collect();
    links
        .iter()
        .find(|l| l.attribute("rel").is_none_or(|r| r == "alternate"))
        .or(links.first())
        .and_then(|l| l.attribute("href"))
        .map(str::to_string)
}

/// Parse a feed; `None` when the XML is not well-formed or not RSS/Atom.
pub fn parse(xml: &str) -> Option<Feed> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = Document::parse_with_options(xml, opts).ok()?;
    let root = doc.root_element();
    match root.tag_name().name() {
        "feed" => {
            let items = root
                .children()
                .filter(|c| c.is_element() && c.tag_name().name() == "entry")
                .map(|e| Item {
                    title: child_text(e, &["title"]),
                    link: atom_link(e),
                    date: child_text(e, &["published", "updated"]),
                })
                .collect();
            Some(Feed {
                format: "atom",
                title: child_text(root, &["title"]),
                link: atom_link(root),
                items,
            })
        }
        "rss" | "RDF" => {
            let channel = child(root, "channel");
            // RSS 2.0 keeps items in the channel; RSS 1.0 beside it.
            let holder = match channel {
                Some(c) if child(c, "item").is_some() => c,
                _ => root,
            };
            let items = holder
                .children()
                .filter(|c| c.is_element() && c.tag_name().name() == "item")
                .map(|i| Item {
                    title: child_text(i, &["title"]),
                    link: child_text(i, &["link"]).or_else(|| child_text(i, &["guid"])),
                    date: child_text(i, &["pubDate", "date"]),
                })
                .collect();
            Some(Feed {
                format: "rss",
                title: channel.and_then(|c| child_text(c, &["title"])),
                link: channel.and_then(|c| child_text(c, &["link"])),
                items,
            })
        }
        _ => None,
    }
}

impl Feed {
    /// `(text, content_md, facts)`.
    pub fn project(&self) -> (String, String, Value) {
        let mut text = String::new();
        let mut md = String::new();
        if let Some(t) = &self.title {
            text.push_str(t);
            text.push('\n');
            md.push_str(&format!("# {t}\n\n"));
        }
        for item in &self.items {
            let title = item.title.as_deref().unwrap_or("(untitled)");
            let date = item
                .date
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            text.push_str(&format!("{title}{date}\n"));
            match &item.link {
                Some(l) => md.push_str(&format!("- [{title}]({l}){date}\n")),
                None => md.push_str(&format!("- {title}{date}\n")),
            }
        }
        let items: Vec<Value> = self
            .items
            .iter()
            .map(|i| json!({"title": i.title, "link": i.link, "date": i.date}))
            .collect();
        let facts = json!({
            "feed": {"format": self.format, "title": self.title, "link": self.link, "item_count": items.len(), "items": items}
        });
        (text, md, facts)
    }
}

/// The text of any XML document: its text nodes, one per line.
pub fn xml_text(xml: &str) -> Option<(String, Value)> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = Document::parse_with_options(xml, opts).ok()?;
    let lines: Vec<String> = doc
        .descendants()
        .filter(Node::is_text)
        .filter_map(|t| t.text())
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|t| !t.is_empty())
        .collect();
    let root = doc.root_element();
    let facts =
        json!({"xml": {"root": root.tag_name().name(), "namespace": root.tag_name().namespace()}});
    Some((
        lines.join("\n") + if lines.is_empty() { "" } else { "\n" },
        facts,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_and_atom() {
        let rss = r#"<?xml version="1.0"?><rss version="2.0"><channel><title>News</title><link>https://n.example/</link>
            <item><title>First</title><link>https://n.example/1</link><pubDate>Mon, 01 Dec 2025 10:00:00 GMT</pubDate></item>
            <item><title>Second</title><guid>https://n.example/2</guid></item></channel></rss>"#;
        let f = parse(rss).unwrap();
        assert_eq!(f.title.as_deref(), Some("News"));
        assert_eq!(f.items.len(), 2);
        assert_eq!(f.items[1].link.as_deref(), Some("https://n.example/2"));
        let (_, md, _) = f.project();
        assert!(md.contains("- [First](https://n.example/1) (Mon, 01 Dec 2025 10:00:00 GMT)"));
        let atom = r#"<feed xmlns="http://www.w3.org/2005/Atom"><title>Blog</title><link rel="self" href="https://b.example/feed"/><link href="https://b.example/"/>
            <entry><title>Post</title><link href="https://b.example/p"/><updated>2025-12-01T00:00:00Z</updated></entry></feed>"#;
        let f = parse(atom).unwrap();
        assert_eq!(f.format, "atom");
        assert_eq!(f.link.as_deref(), Some("https://b.example/"));
        assert_eq!(f.items[0].date.as_deref(), Some("2025-12-01T00:00:00Z"));
        assert!(parse("<note>x</note>").is_none());
        assert!(parse("<rss><channel>").is_none());
    }

    #[test]
    fn entity_bombs_are_refused() {
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">]><rss><channel><title>&g;&g;&g;&g;&g;&g;</title></channel></rss>"#;
        // roxmltree caps entity expansion: the parse fails instead of growing.
        assert!(parse(bomb).is_none_or(|f| f.title.is_none_or(|t| t.len() < 100_000_000)));
    }
}
