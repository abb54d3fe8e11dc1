//! Post-processors: the special tokens a template puts around the encoded text (BERT's
//! `[CLS]`/`[SEP]`, `TemplateProcessing`), with the type ids of each part.

use std::collections::HashMap;
use std::sync::Arc;

use crate::tokenizer::encoding::TokenTexts;
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

#[derive(Clone, Debug)]
pub enum PostProcessor {
    Template {
        single: Vec<TemplatePiece>,
        pair: Vec<TemplatePiece>,
        specials: HashMap<String, SpecialTokenDef>,
    },
    Bert {
        sep: (Arc<str>, u32),
        cls: (Arc<str>, u32),
    },
}

pub(crate) fn post_process(
    pp: Option<&PostProcessor>,
    vocab: &Vocab,
    a: Encoding,
    b: Option<Encoding>,
    add_special_tokens: bool,
) -> Encoding {
    let n_seq = 1 + b.is_some() as u8;
    let overflows = !a.overflowing.is_empty() || b.as_ref().is_some_and(|b| !b.overflowing.is_empty());
    let mut out = if overflows {
        post_process_overflowing(pp, vocab, a, b, add_special_tokens)
    } else {
        post_process_inner(pp, vocab, a, b, add_special_tokens)
    };
    out.set_n_seq(n_seq);
    out
}

/// Post-processing when truncation left overflowing parts, as the reference does it: the
/// template's pieces are merged left to right, and each merge pairs every overflowing
/// part of the left side with the right side and each of its parts, and the left side
/// with each part of the right (see [`Encoding::merged`]).
pub(crate) fn post_process_overflowing(
    pp: Option<&PostProcessor>,
    vocab: &Vocab,
    a: Encoding,
    b: Option<Encoding>,
    add_special_tokens: bool,
) -> Encoding {
    let vocab = Some(vocab.clone());
    let bare = || Encoding {
        texts: TokenTexts { vocab: vocab.clone(), overrides: Vec::new() },
        ..Default::default()
    };
    let special = |ids: &[u32], toks: &[Arc<str>], type_id: u32| {
        let mut e = bare();
        for (id, t) in ids.iter().zip(toks) {
            e.push_special(*id, t, type_id);
        }
        e
    };
    let pieces: Vec<Encoding> = match pp {
        Some(PostProcessor::Template { single, pair, specials }) => {
            let template = if b.is_some() { pair } else { single };
            template
                .iter()
                .filter_map(|p| match p {
                    TemplatePiece::Sequence { seq, type_id } => {
                        let s = if *seq == 0 { Some(&a) } else { b.as_ref() };
                        s.map(|s| {
                            let mut s = s.clone();
                            s.set_type_ids_all(*type_id);
                            s
                        })
                    }
                    TemplatePiece::Special { id, type_id } => {
                        add_special_tokens.then(|| special(&specials[id].ids, &specials[id].tokens, *type_id))
                    }
                })
                .collect()
        }
        Some(PostProcessor::Bert { sep, cls }) if add_special_tokens => {
            let mut v = vec![
                special(&[cls.1], std::slice::from_ref(&cls.0), 0),
                a,
                special(&[sep.1], std::slice::from_ref(&sep.0), 0),
            ];
            if let Some(b) = b {
                v.push(b);
                v.push(special(&[sep.1], std::slice::from_ref(&sep.0), 1));
            }
            v
        }
        _ => std::iter::once(a).chain(b).collect(),
    };
    pieces.iter().fold(bare(), |acc, p| acc.merged(p))
}

pub(crate) fn post_process_inner(
    pp: Option<&PostProcessor>,
    vocab: &Vocab,
    a: Encoding,
    b: Option<Encoding>,
    add_special_tokens: bool,
) -> Encoding {
    match pp {
        Some(PostProcessor::Template { single, pair, specials }) => {
            let template = if b.is_some() { pair } else { single };
            if b.is_none() && !add_special_tokens {
                // One input, no special tokens: only its type id to set.
                let mut type_ids = template.iter().filter_map(|p| match p {
                    TemplatePiece::Sequence { seq: 0, type_id } => Some(*type_id),
                    _ => None,
                });
                if let (Some(t), None) = (type_ids.next(), type_ids.next()) {
                    let mut a = a;
                    a.set_type_ids(t);
                    return a;
                }
            }
            let mut seqs = [Some(a), b];
            // A sequence used once by the template is moved, not copied.
            let mut uses = [0usize; 2];
            for p in template {
                if let TemplatePiece::Sequence { seq, .. } = p {
                    uses[*seq] += 1;
                }
            }
            let mut take = |seq: usize, uses: &mut [usize; 2], type_id: u32| {
                uses[seq] -= 1;
                let s = if uses[seq] == 0 { seqs[seq].take() } else { seqs[seq].clone() };
                s.map(|mut s| {
                    s.set_type_ids(type_id);
                    s
                })
            };
            // The first sequence becomes the output and the special tokens before it are
            // put in front in place: its tokens move once, within their own buffer, and
            // no Encoding is made per special token.
            let first = template.iter().position(|p| matches!(p, TemplatePiece::Sequence { .. }));
            let (mut out, rest) = match first.map(|i| (i, &template[i])) {
                Some((i, TemplatePiece::Sequence { seq, type_id })) => {
                    match take(*seq, &mut uses, *type_id) {
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
                    }
                }
                _ => (Encoding::default(), &template[..]),
            };
            if out.texts.vocab.is_none() {
                out.texts.vocab = Some(vocab.clone());
            }
            for p in rest {
                match p {
                    TemplatePiece::Sequence { seq, type_id } => {
                        if let Some(s) = take(*seq, &mut uses, *type_id) {
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
        _ => {
            let mut out = a;
            if let Some(b) = b {
                out.append(b);
            }
            out
        }
    }
}

pub(crate) fn added_tokens_count(pp: Option<&PostProcessor>, is_pair: bool) -> usize {
    match pp {
        None => 0,
        Some(PostProcessor::Bert { .. }) => {
            if is_pair {
                3
            } else {
                2
            }
        }
        Some(PostProcessor::Template { single, pair, specials }) => {
            let t = if is_pair { pair } else { single };
            t.iter()
                .map(|p| match p {
                    TemplatePiece::Special { id, .. } => specials[id].ids.len(),
                    TemplatePiece::Sequence { .. } => 0,
                })
                .sum()
        }
    }
}

/// The special-token ids the single-sequence template puts before and after the text.
pub(crate) fn single_template_ids(pp: Option<&PostProcessor>) -> (Vec<u32>, Vec<u32>) {
    let (mut before, mut after) = (Vec::new(), Vec::new());
    match pp {
        Some(PostProcessor::Template { single, specials, .. }) => {
            let mut seen_seq = false;
            for p in single {
                match p {
                    TemplatePiece::Sequence { .. } => seen_seq = true,
                    TemplatePiece::Special { id, .. } => {
                        let ids = &specials[id].ids;
                        if seen_seq {
                            after.extend(ids)
                        } else {
                            before.extend(ids)
                        }
                    }
                }
            }
        }
        Some(PostProcessor::Bert { sep, cls }) => {
            before.push(cls.1);
            after.push(sep.1);
        }
        None => {}
    }
    (before, after)
}
