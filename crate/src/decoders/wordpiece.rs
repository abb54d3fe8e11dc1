//! The WordPiece decoder, and the cleanup it shares with CTC.

pub(super) fn decode_chain(prefix: &str, cleanup: bool, mut tokens: Vec<String>) -> Vec<String> {
    for (i, t) in tokens.iter_mut().enumerate() {
        if i != 0 {
            *t = match t.strip_prefix(prefix) {
                Some(rest) => rest.to_owned(),
                None => format!(" {t}"),
            };
        }
        if cleanup {
            *t = cleanup_decoded(t);
        }
    }
    tokens
}

/// The reference's cleanup of decoded text: spaces before punctuation and in English
/// contractions removed, in this order.
pub(super) fn cleanup_decoded(s: &str) -> String {
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
