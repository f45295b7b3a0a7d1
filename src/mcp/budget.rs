//! How much text one tool result may carry: a token budget counted with a real BPE
//! tokenizer (o200k_base, `tiktoken-rs` with its ranks bundled: no download, exact, so it
//! never undercounts that tokenizer) and a character cap (Claude Code saves a result of more
//! than 50,000 characters to a file instead of showing it). Characters are counted as UTF-16
//! code units, the length a JavaScript client measures. The only module that names the
//! tokenizer crate.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

/// Default token budget of one tool result's text.
pub const DEFAULT_TOKENS: usize = 10_000;
/// Default character cap of one tool result (Claude Code's persist-to-file threshold).
pub const DEFAULT_CHARS: usize = 50_000;

/// A result's room: tokens and characters, both enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// o200k_base tokens.
    pub tokens: usize,
    /// UTF-16 code units.
    pub chars: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            tokens: DEFAULT_TOKENS,
            chars: DEFAULT_CHARS,
        }
    }
}

/// The tokenizer, loaded once (a few hundred milliseconds); `None` if its bundled ranks
/// failed to load, and then every count is the byte length (a token is at least one byte,
/// so that never undercounts either).
fn bpe() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().ok()).as_ref()
}

/// o200k_base tokens of `text`.
pub fn tokens(text: &str) -> usize {
    match bpe() {
        Some(b) => b.encode_ordinary(text).len(),
        None => text.len(),
    }
}

/// UTF-16 code units of `text`.
pub fn chars(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

impl Budget {
    /// What is left after `used` (saturating).
    pub fn less(self, used: &str) -> Budget {
        Budget {
            tokens: self.tokens.saturating_sub(tokens(used)),
            chars: self.chars.saturating_sub(chars(used)),
        }
    }

    /// Less a fixed number of characters (text this module does not see, such as a
    /// result's structured part).
    pub fn less_chars(self, n: usize) -> Budget {
        Budget {
            chars: self.chars.saturating_sub(n),
            ..self
        }
    }

    /// Whether `text` fits whole.
    pub fn fits(self, text: &str) -> bool {
        chars(text) <= self.chars && tokens(text) <= self.tokens
    }

    /// The byte length of the longest prefix of `text` that fits (on a character boundary).
    pub fn fit(self, text: &str) -> usize {
        // Characters first: the cheap cut bounds what the tokenizer reads.
        let mut end = 0;
        let mut units = 0;
        for (i, c) in text.char_indices() {
            units += c.len_utf16();
            if units > self.chars {
                break;
            }
            end = i + c.len_utf8();
        }
        let head = &text[..end];
        let Some(b) = bpe() else {
            return floor_char(text, end.min(self.tokens));
        };
        let ids = b.encode_ordinary(head);
        if ids.len() <= self.tokens {
            return end;
        }
        // The bytes of the first `tokens` tokens, then back to a character boundary; a
        // prefix re-encodes to at most as many tokens in practice, checked below anyway.
        let mut cut: usize = b
            ._decode_native_and_split(ids[..self.tokens].to_vec())
            .map(|t| t.len())
            .sum();
        loop {
            cut = floor_char(text, cut.min(end));
            if cut == 0 || tokens(&text[..cut]) <= self.tokens {
                return cut;
            }
            cut -= 1;
        }
    }
}

/// The largest character boundary of `s` at or below `i`.
fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_real_tokens_and_utf16_chars() {
        // Known o200k_base counts (js-tiktoken agrees).
        assert_eq!(tokens("Hello world"), 2);
        assert_eq!(tokens(""), 0);
        assert_eq!(chars("héllo"), 5);
        assert_eq!(chars("😀"), 2);
    }

    #[test]
    fn fit_respects_both_limits_and_character_boundaries() {
        let text = "word ".repeat(1000);
        let b = Budget {
            tokens: 100,
            chars: 10_000,
        };
        let cut = b.fit(&text);
        assert!(tokens(&text[..cut]) <= 100);
        assert!(tokens(&text[..cut + 5]) > 100, "uses the room: {cut}");
        let b = Budget {
            tokens: 10_000,
            chars: 12,
        };
        assert_eq!(b.fit(&text), 12);
        let accents = "é".repeat(50);
        let cut = Budget {
            tokens: 7,
            chars: 1000,
        }
        .fit(&accents);
        assert!(accents.is_char_boundary(cut) && tokens(&accents[..cut]) <= 7);
        assert!(Budget::default().fits("short"));
        assert_eq!(
            Budget::default().less("Hello world").tokens,
            DEFAULT_TOKENS - 2
        );
    }
}
