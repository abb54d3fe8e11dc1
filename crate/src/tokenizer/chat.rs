//! Chat templates (the textbook chapter, section 1.6): a list of messages becomes one token sequence in which the
//! role markers are single special tokens and everything a user typed is ordinary text.
//!
//! The template is rendered and encoded by the same code, piece by piece: a marker is looked
//! up as one special token, and each run of text between two markers (a role name, its
//! separator and the message) is encoded with [`BpeTokenizer::encode_ordinary`], which reads
//! a special token's characters as plain text. So `"<|im_end|>"` typed inside a message costs
//! several ordinary tokens and cannot close the message or open a new role, while the ids of
//! a harmless conversation are exactly those of encoding the rendered string with its
//! special tokens allowed (the runs between markers are the same strings either way).

use super::bpe::BpeTokenizer;
use crate::{Error, Result};

/// One chat message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message<'a> {
    pub role: &'a str,
    pub content: &'a str,
}

/// A template's fixed strings: each message is `open role [role_end] sep content close after`,
/// and the generation prompt is `open assistant sep`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatTemplate {
    pub name: &'static str,
    /// Special token opening a message (`<|im_start|>`).
    pub open: &'static str,
    /// Ordinary text between the role and the content (`\n`).
    pub sep: &'static str,
    /// Special token after the role (harmony's `<|message|>`), if the template has one.
    pub role_end: Option<&'static str>,
    /// Special token closing a message (`<|im_end|>`).
    pub close: &'static str,
    /// Ordinary text after the closing token (`\n`).
    pub after: &'static str,
}

/// ChatML, as in the textbook's example (Qwen, many open models).
pub const CHATML: ChatTemplate = ChatTemplate {
    name: "chatml",
    open: "<|im_start|>",
    sep: "\n",
    role_end: None,
    close: "<|im_end|>",
    after: "\n",
};

/// OpenAI's harmony format (o200k_harmony): `<|start|>role<|message|>content<|end|>`.
pub const HARMONY: ChatTemplate = ChatTemplate {
    name: "harmony",
    open: "<|start|>",
    sep: "",
    role_end: Some("<|message|>"),
    close: "<|end|>",
    after: "",
};

/// What a piece of the rendered conversation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartKind {
    /// A role marker: always exactly one special token.
    Marker,
    /// Ordinary text: role names, separators and message contents.
    Text,
}

impl PartKind {
    pub fn name(self) -> &'static str {
        match self {
            PartKind::Marker => "marker",
            PartKind::Text => "text",
        }
    }
}

/// One piece of the encoded conversation with the ids it became.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ChatPart {
    pub kind: PartKind,
    pub text: String,
    pub ids: Vec<u32>,
    /// The message this piece belongs to (`messages.len()` for the generation prompt).
    pub message: usize,
}

impl ChatTemplate {
    /// A template by name (`"chatml"`, `"harmony"`).
    pub fn named(name: &str) -> Result<ChatTemplate> {
        match name {
            "chatml" => Ok(CHATML),
            "harmony" => Ok(HARMONY),
            other => Err(Error::Input(format!("unknown chat template {other:?} (known: chatml, harmony)"))),
        }
    }

    /// The template whose markers are all special tokens of `tok`: ChatML (Qwen3) or harmony
    /// (o200k_harmony).
    pub fn for_tokenizer(tok: &BpeTokenizer) -> Result<ChatTemplate> {
        for t in [CHATML, HARMONY] {
            if t.markers().all(|m| special_id(tok, m).is_some()) {
                return Ok(t);
            }
        }
        Err(Error::Input(format!(
            "{} has no chat markers among its special tokens (ChatML needs <|im_start|> and <|im_end|>, harmony <|start|>, <|message|> and <|end|>); load it with special_tokens that include them",
            tok.name()
        )))
    }

    fn markers(&self) -> impl Iterator<Item = &'static str> {
        [Some(self.open), self.role_end, Some(self.close)].into_iter().flatten()
    }

    /// The conversation as one string, as a model sees it (special tokens written out).
    pub fn render(&self, messages: &[Message<'_>], add_generation_prompt: bool) -> Result<String> {
        Ok(self.parts(messages, add_generation_prompt)?.into_iter().map(|(_, text, _)| text).collect())
    }

    /// The rendered pieces: markers, and the maximal runs of text between them.
    fn parts(
        &self,
        messages: &[Message<'_>],
        add_generation_prompt: bool,
    ) -> Result<Vec<(PartKind, String, usize)>> {
        let mut parts: Vec<(PartKind, String, usize)> = Vec::new();
        let text = |parts: &mut Vec<(PartKind, String, usize)>, s: &str, message: usize| {
            if s.is_empty() {
                return;
            }
            match parts.last_mut() {
                Some((PartKind::Text, t, _)) => t.push_str(s),
                _ => parts.push((PartKind::Text, s.to_string(), message)),
            }
        };
        let marker = |parts: &mut Vec<(PartKind, String, usize)>, s: &str, message: usize| {
            parts.push((PartKind::Marker, s.to_string(), message))
        };
        // The generation prompt stops after the role (and separator): in harmony the model
        // writes its own header fields before `<|message|>`.
        let header = |parts: &mut Vec<(PartKind, String, usize)>, role: &str, i: usize, full: bool| {
            marker(parts, self.open, i);
            text(parts, role, i);
            if let (Some(m), true) = (self.role_end, full) {
                marker(parts, m, i);
            }
            text(parts, self.sep, i);
        };
        for (i, m) in messages.iter().enumerate() {
            check_role(m.role)?;
            header(&mut parts, m.role, i, true);
            text(&mut parts, m.content, i);
            marker(&mut parts, self.close, i);
            text(&mut parts, self.after, i);
        }
        if add_generation_prompt {
            header(&mut parts, "assistant", messages.len(), false);
        }
        Ok(parts)
    }

    /// Encodes the conversation with `tok`: each marker one special token, each run of text
    /// between markers [`BpeTokenizer::encode_ordinary`].
    pub fn encode(
        &self,
        tok: &BpeTokenizer,
        messages: &[Message<'_>],
        add_generation_prompt: bool,
    ) -> Result<Vec<ChatPart>> {
        let parts = self.parts(messages, add_generation_prompt)?;
        parts
            .into_iter()
            .map(|(kind, text, message)| {
                let ids = match kind {
                    PartKind::Marker => vec![special_id(tok, &text).ok_or_else(|| {
                        Error::Input(format!(
                            "{} has no special token {text:?}, which the {} template needs",
                            tok.name(),
                            self.name
                        ))
                    })?],
                    PartKind::Text => tok.encode_ordinary(&text),
                };
                Ok(ChatPart { kind, text, ids, message })
            })
            .collect()
    }
}

/// Roles are names the template writes out; one that could break the layout is refused.
fn check_role(role: &str) -> Result<()> {
    if role.is_empty() {
        return Err(Error::Input("a message's role is empty".into()));
    }
    if role.chars().any(|c| c.is_control() || c.is_whitespace() || c == '<' || c == '>' || c == '|') {
        return Err(Error::Input(format!(
            "role {role:?} contains whitespace, control characters or <, |, > (roles are names like \"user\")"
        )));
    }
    Ok(())
}

/// The id of `content` if it is one of `tok`'s special tokens.
fn special_id(tok: &BpeTokenizer, content: &str) -> Option<u32> {
    tok.added_tokens().iter().find(|t| t.special && &*t.content == content).map(|t| t.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs<'a>(pairs: &[(&'a str, &'a str)]) -> Vec<Message<'a>> {
        pairs.iter().map(|&(role, content)| Message { role, content }).collect()
    }

    #[test]
    fn chatml_renders_the_textbooks_example() {
        // The textbook chapter's section 1.6, verbatim.
        let m = msgs(&[("system", "Ты -- вежливый ассистент."), ("user", "Привет!")]);
        let want = "<|im_start|>system\nТы -- вежливый ассистент.<|im_end|>\n<|im_start|>user\nПривет!<|im_end|>\n<|im_start|>assistant\n";
        assert_eq!(CHATML.render(&m, true).unwrap(), want);
    }

    #[test]
    fn text_runs_span_from_marker_to_marker() {
        let m = msgs(&[("user", "hi"), ("assistant", "yo")]);
        let parts = CHATML.parts(&m, false).unwrap();
        let kinds: Vec<_> = parts.iter().map(|p| (p.0, p.1.as_str(), p.2)).collect();
        assert_eq!(
            kinds,
            [
                (PartKind::Marker, "<|im_start|>", 0),
                (PartKind::Text, "user\nhi", 0),
                (PartKind::Marker, "<|im_end|>", 0),
                (PartKind::Text, "\n", 0),
                (PartKind::Marker, "<|im_start|>", 1),
                (PartKind::Text, "assistant\nyo", 1),
                (PartKind::Marker, "<|im_end|>", 1),
                (PartKind::Text, "\n", 1),
            ]
        );
    }

    #[test]
    fn harmony_has_no_separators() {
        let m = msgs(&[("user", "hi")]);
        assert_eq!(HARMONY.render(&m, true).unwrap(), "<|start|>user<|message|>hi<|end|><|start|>assistant");
    }

    #[test]
    fn bad_roles_and_names_are_refused() {
        for role in ["", "user\n", "a b", "<|im_end|>", "x\u{0}"] {
            assert!(CHATML.render(&msgs(&[(role, "c")]), false).is_err(), "{role:?}");
        }
        assert!(ChatTemplate::named("jinja").is_err());
        assert_eq!(ChatTemplate::named("harmony").unwrap(), HARMONY);
    }
}
