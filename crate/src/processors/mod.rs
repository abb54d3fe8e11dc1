//! Post-processors: what the reference does to the encoded inputs after the model. The special
//! tokens a template puts around them (BERT's `[CLS]`/`[SEP]`, RoBERTa's `<s>`/`</s>`,
//! `TemplateProcessing`) with the type ids of each part, the offsets ByteLevel trims of their
//! spaces, and a `Sequence` of these.
//!
//! The reference hands a list of encodings from step to step: one per input at first, then
//! whatever each step returns (a template returns one per piece), and merges the list at the
//! end, each encoding remembering which tokens each input covers. [`general`] does exactly
//! that, and is what runs when truncation left overflowing parts or the steps are unusual; the
//! common shapes (ByteLevel steps, then at most one step that adds tokens) are done in place.

mod general;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::Result;
pub use crate::pre_tokenizers::byte_level::ByteLevel;
use crate::tokenizer::Encoding;

/// The vocabulary's token texts, by id, which an Encoding shares.
type Vocab = Arc<Vec<Arc<str>>>;

#[derive(Clone, Debug)]
pub enum TemplatePiece {
    Special {
        id: String,
        type_id: u32,
    },
    /// `seq` 0 is A, 1 is B.
    Sequence {
        seq: usize,
        type_id: u32,
    },
}

#[derive(Clone, Debug)]
pub struct SpecialTokenDef {
    pub ids: Vec<u32>,
    pub tokens: Vec<Arc<str>>,
}

/// A special token and its id (`sep` and `cls` of BERT and RoBERTa).
pub type Special = (Arc<str>, u32);

#[derive(Clone, Debug)]
pub enum PostProcessor {
    Template {
        single: Vec<TemplatePiece>,
        pair: Vec<TemplatePiece>,
        specials: HashMap<String, SpecialTokenDef>,
    },
    /// `[CLS] A [SEP]`, `[CLS] A [SEP] B [SEP]` (B and its `[SEP]` of type 1).
    Bert { sep: Special, cls: Special },
    /// `<s> A </s>`, `<s> A </s> </s> B </s>`, every type id 0; offsets trimmed first, as
    /// ByteLevel trims them, when `trim_offsets`.
    Roberta { sep: Special, cls: Special, trim_offsets: bool, add_prefix_space: bool },
    /// Offsets trimmed of the spaces tokens start and end with (when `trim_offsets`).
    ByteLevel(ByteLevel),
    /// Each step in turn on what the last one returned.
    Sequence(Vec<PostProcessor>),
}

impl PostProcessor {
    /// Whether this step adds special tokens (rather than only trimming offsets).
    fn adds_tokens(&self) -> bool {
        matches!(
            self,
            PostProcessor::Template { .. } | PostProcessor::Bert { .. } | PostProcessor::Roberta { .. }
        )
    }
}

/// The reference's post-processing of the encoded input `a` (and `b`), with the special
/// tokens when `add_special_tokens`.
pub(crate) fn post_process(
    pp: Option<&PostProcessor>,
    vocab: &Vocab,
    a: Encoding,
    b: Option<Encoding>,
    add_special_tokens: bool,
) -> Result<Encoding> {
    let overflows = !a.overflowing.is_empty() || b.as_ref().is_some_and(|b| !b.overflowing.is_empty());
    match simple_shape(pp, b.is_some()) {
        Some((trims, adder)) if !overflows => {
            Ok(post_process_in_place(trims, adder, vocab, a, b, add_special_tokens))
        }
        _ => general::post_process(pp, vocab, a, b, add_special_tokens),
    }
}

/// `(trimming steps, the step that adds tokens)` when the post-processor is ByteLevel steps
/// followed by at most one step that adds tokens, and that step numbers the inputs as the
/// merge would (a template that uses each input once): the shapes the in-place path handles.
fn simple_shape(
    pp: Option<&PostProcessor>,
    is_pair: bool,
) -> Option<(&[PostProcessor], Option<&PostProcessor>)> {
    let (trims, adder) = match pp {
        None => (&[][..], None),
        Some(p @ PostProcessor::ByteLevel(_)) => (std::slice::from_ref(p), None),
        Some(PostProcessor::Sequence(steps)) => match steps.split_last() {
            Some((last, rest)) if last.adds_tokens() => (rest, Some(last)),
            _ => (&steps[..], None),
        },
        Some(p) => (&[][..], Some(p)),
    };
    if !trims.iter().all(|t| matches!(t, PostProcessor::ByteLevel(_))) {
        return None;
    }
    if let Some(PostProcessor::Template { single, pair, .. }) = adder {
        let template = if is_pair { pair } else { single };
        let uses = |s| {
            template.iter().filter(|p| matches!(p, TemplatePiece::Sequence { seq, .. } if *seq == s)).count()
        };
        if uses(0) != 1 || uses(1) != is_pair as usize {
            return None;
        }
    }
    Some((trims, adder))
}

/// Post-processing of the shapes [`simple_shape`] accepts, when no input overflows: the input's
/// tokens move once, within their own buffers, and special tokens are put around them in place.
fn post_process_in_place(
    trims: &[PostProcessor],
    adder: Option<&PostProcessor>,
    vocab: &Vocab,
    mut a: Encoding,
    mut b: Option<Encoding>,
    add_special_tokens: bool,
) -> Encoding {
    let mut trim_all = |add_prefix_space: bool| {
        a.trim_offsets(add_prefix_space);
        if let Some(b) = b.as_mut() {
            b.trim_offsets(add_prefix_space);
        }
    };
    for t in trims {
        if let PostProcessor::ByteLevel(bl) = t {
            if bl.trim_offsets {
                trim_all(bl.add_prefix_space);
            }
        }
    }
    if let Some(PostProcessor::Roberta { trim_offsets: true, add_prefix_space, .. }) = adder {
        trim_all(*add_prefix_space);
    }
    let n_seq = 1 + b.is_some() as u8;
    let mut out = with_special_tokens(adder, vocab, a, b, add_special_tokens);
    out.n_seq = n_seq;
    out
}

fn with_special_tokens(
    pp: Option<&PostProcessor>,
    vocab: &Vocab,
    a: Encoding,
    b: Option<Encoding>,
    add_special_tokens: bool,
) -> Encoding {
    match pp {
        Some(PostProcessor::Template { single, pair, specials }) => {
            // Each input appears once in the template (see `simple_shape`): it is moved.
            let template = if b.is_some() { pair } else { single };
            let mut seqs = [Some(a), b];
            let mut take = |seq: usize, type_id: u32| {
                seqs[seq].take().map(|mut s| {
                    s.set_type_ids(type_id);
                    s
                })
            };
            // The first input becomes the output and the special tokens before it are put in
            // front in place: its tokens move once, within their own buffer, and no Encoding is
            // made per special token.
            let first = template.iter().position(|p| matches!(p, TemplatePiece::Sequence { .. }));
            let (mut out, rest) = match first.map(|i| (i, &template[i])) {
                Some((i, TemplatePiece::Sequence { seq, type_id })) => match take(*seq, *type_id) {
                    Some(mut s) => {
                        if add_special_tokens {
                            for p in template[..i].iter().rev() {
                                if let TemplatePiece::Special { id, type_id } = p {
                                    let d = &specials[id];
                                    for (id, t) in d.ids.iter().zip(&d.tokens).rev() {
                                        s.prepend_special(*id, t, *type_id);
                                    }
                                }
                            }
                        }
                        (s, &template[i + 1..])
                    }
                    None => (Encoding::default(), &template[i + 1..]),
                },
                _ => (Encoding::default(), &template[..]),
            };
            if out.texts.vocab.is_none() {
                out.texts.vocab = Some(vocab.clone());
            }
            for p in rest {
                match p {
                    TemplatePiece::Sequence { seq, type_id } => {
                        if let Some(s) = take(*seq, *type_id) {
                            out.append(s);
                        }
                    }
                    TemplatePiece::Special { id, type_id } => {
                        if add_special_tokens {
                            let d = &specials[id];
                            for (id, t) in d.ids.iter().zip(&d.tokens) {
                                out.push_special(*id, t, *type_id);
                            }
                        }
                    }
                }
            }
            out
        }
        Some(PostProcessor::Bert { sep, cls }) if add_special_tokens => {
            // [CLS] is put in front of `a` in place: the input's tokens move once
            // (within their own buffers), not into a fresh Encoding.
            let mut out = a;
            out.prepend_special(cls.1, &cls.0, 0);
            out.push_special(sep.1, &sep.0, 0);
            if let Some(b) = b {
                out.append(b);
                out.push_special(sep.1, &sep.0, 1);
            }
            out
        }
        Some(PostProcessor::Roberta { sep, cls, .. }) => {
            let mut out = a;
            out.set_type_ids(0);
            if add_special_tokens {
                out.prepend_special(cls.1, &cls.0, 0);
                out.push_special(sep.1, &sep.0, 0);
            }
            if let Some(mut b) = b {
                b.set_type_ids(0);
                if add_special_tokens {
                    out.push_special(sep.1, &sep.0, 0);
                }
                out.append(b);
                if add_special_tokens {
                    out.push_special(sep.1, &sep.0, 0);
                }
            }
            out
        }
        _ => {
            let mut out = a;
            if let Some(b) = b {
                out.append(b);
            }
            out
        }
    }
}

/// How many special tokens the post-processor adds to one input (`is_pair`: to two): the room
/// truncation leaves for them.
pub(crate) fn added_tokens_count(pp: Option<&PostProcessor>, is_pair: bool) -> usize {
    match pp {
        None | Some(PostProcessor::ByteLevel(_)) => 0,
        Some(PostProcessor::Bert { .. }) => 2 + is_pair as usize,
        Some(PostProcessor::Roberta { .. }) => 2 + 2 * is_pair as usize,
        Some(PostProcessor::Template { single, pair, specials }) => {
            let t = if is_pair { pair } else { single };
            t.iter()
                .map(|p| match p {
                    TemplatePiece::Special { id, .. } => specials[id].ids.len(),
                    TemplatePiece::Sequence { .. } => 0,
                })
                .sum()
        }
        Some(PostProcessor::Sequence(steps)) => {
            steps.iter().map(|s| added_tokens_count(Some(s), is_pair)).sum()
        }
    }
}

/// The special-token ids the post-processor puts before and after one input's ids; None when
/// its output is not the input's ids once, whole, between two runs of ids (a template that
/// repeats the input, or one the reference cannot apply).
pub(crate) fn single_template_ids(pp: Option<&PostProcessor>) -> Option<(Vec<u32>, Vec<u32>)> {
    // A one-token input whose id no special token has (ids are at most u32::MAX / 2).
    const PROBE: u32 = u32::MAX;
    let mut probe = Encoding::default();
    probe.push_token(PROBE, None, (0, 0), 0);
    probe.fill_sequence(0, 0);
    let out = general::post_process(pp, &Arc::new(Vec::new()), probe, None, true).ok()?;
    let ids: Vec<u32> = out.ids().collect();
    let at = ids.iter().position(|&id| id == PROBE)?;
    if ids[at + 1..].contains(&PROBE) {
        return None;
    }
    Some((ids[..at].to_vec(), ids[at + 1..].to_vec()))
}

/// `ids` with the special tokens `add_special_tokens` puts around one input: `template`
/// (from [`single_template_ids`]) when there is one, else the whole post-processor run on them.
pub(crate) fn add_special_ids(
    pp: Option<&PostProcessor>,
    template: Option<&(Vec<u32>, Vec<u32>)>,
    mut ids: Vec<u32>,
) -> Result<Vec<u32>> {
    match template {
        Some((before, after)) => {
            if !before.is_empty() {
                ids.splice(0..0, before.iter().copied());
            }
            ids.extend_from_slice(after);
            Ok(ids)
        }
        None => {
            let mut e = Encoding::default();
            for id in ids {
                e.push_token(id, None, (0, 0), 0);
            }
            e.fill_sequence(0, 0);
            Ok(general::post_process(pp, &Arc::new(Vec::new()), e, None, true)?.ids().collect())
        }
    }
}
