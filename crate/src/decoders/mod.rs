//! Decoders: the tokens of some ids back to text.

#[derive(Clone, Debug)]
pub enum Decoder {
    WordPiece { prefix: String, cleanup: bool },
}

/// Joins `tokens` as `decoder` does (with no decoder: separated by spaces, as the reference).
pub(crate) fn decode(decoder: Option<&Decoder>, tokens: &[&str]) -> String {
    match decoder {
        Some(Decoder::WordPiece { prefix, cleanup }) => {
            let mut out = String::new();
            for (i, t) in tokens.iter().enumerate() {
                let piece = if i != 0 {
                    match t.strip_prefix(prefix.as_str()) {
                        Some(rest) => rest.to_owned(),
                        None => format!(" {t}"),
                    }
                } else {
                    (*t).to_owned()
                };
                if *cleanup {
                    out.push_str(&cleanup_decoded(&piece));
                } else {
                    out.push_str(&piece);
                }
            }
            out
        }
        None => tokens.join(" "),
    }
}

/// The reference's WordPiece decoder cleanup: spaces before punctuation and in English
/// contractions removed, in this order.
fn cleanup_decoded(s: &str) -> String {
    s.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" do not", " don't")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
}
