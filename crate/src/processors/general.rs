//! Post-processing as the reference runs it, step by step: a list of encodings handed from step
//! to step, each knowing which of its tokens each input covers, merged at the end. Every shape
//! of post-processor and every overflowing part goes through here; the in-place path of the
//! parent module gives the same Encoding for the shapes it accepts.

use std::ops::Range;

use super::{PostProcessor, Special, SpecialTokenDef, TemplatePiece, Vocab};
use crate::error::{Error, Result};
use crate::tokenizer::encoding::{Encoding, TokenTexts};

/// One encoding of the list.
#[derive(Clone)]
struct Part {
    /// The tokens (its `overflowing` stays empty: the parts are in `over`).
    enc: Encoding,
    /// (input, the tokens it covers), at most one entry per input: setting an input's range
    /// again replaces it, as merging two encodings that both hold an input does. A token no
    /// range covers belongs to no input.
    ranges: Vec<(usize, Range<usize>)>,
    over: Vec<Part>,
}

impl Part {
    fn new(mut enc: Encoding) -> Part {
        let over = std::mem::take(&mut enc.overflowing).into_iter().map(Part::new).collect();
        Part { enc, ranges: Vec::new(), over }
    }

    fn empty(vocab: &Vocab) -> Part {
        let texts = TokenTexts { vocab: Some(vocab.clone()), overrides: Vec::new() };
        Part::new(Encoding { texts, ..Default::default() })
    }

    fn set_range(&mut self, seq: usize, r: Range<usize>) {
        match self.ranges.iter_mut().find(|(s, _)| *s == seq) {
            Some(entry) => entry.1 = r,
            None => self.ranges.push((seq, r)),
        }
    }

    /// Every token belongs to input `seq` (the reference's `set_sequence_id`).
    fn set_sequence(&mut self, seq: usize) {
        self.set_range(seq, 0..self.enc.len());
    }

    /// ByteLevel's trimming, here and in the overflowing parts (not theirs).
    fn trim(&mut self, add_prefix_space: bool) {
        self.enc.trim_offsets(add_prefix_space);
        self.over.iter_mut().for_each(|o| o.enc.trim_offsets(add_prefix_space));
    }

    /// `self` followed by `pair`, as the reference merges two encodings: the overflowing parts
    /// are each part of `self` merged with `pair` (its parts nested), then with each part of
    /// `pair`, then `self` (with its parts) merged with each part of `pair`.
    fn merged(mut self, pair: Part) -> Part {
        let mut over = Vec::new();
        for so in &self.over {
            over.push(so.clone().merged(pair.clone()));
            for po in &pair.over {
                over.push(so.clone().merged(po.clone()));
            }
        }
        for po in &pair.over {
            over.push(self.clone().merged(po.clone()));
        }
        let shift = self.enc.len();
        for (seq, r) in &pair.ranges {
            self.set_range(*seq, r.start + shift..r.end + shift);
        }
        self.enc.append(pair.enc);
        self.over = over;
        self
    }

    /// The Encoding, with the sequence ids the reference reads off the ranges: for each input
    /// 0, 1, ... up to the number of ranges, in turn, its range's tokens (every token when it
    /// has none).
    fn finish(self) -> Encoding {
        let mut enc = self.enc;
        let n = enc.len();
        let n_seq = self.ranges.len().max(1);
        let mut seq = vec![None; n];
        for s in 0..n_seq {
            let r = self.ranges.iter().find(|(k, _)| *k == s).map_or(0..n, |(_, r)| r.clone());
            seq[r].fill(Some(u8::try_from(s).unwrap_or(u8::MAX)));
        }
        enc.set_sequences(&seq);
        enc.n_seq = u8::try_from(n_seq).unwrap_or(u8::MAX);
        enc.overflowing = self.over.into_iter().map(Part::finish).collect();
        enc
    }
}

/// The reference's post-processing of `a` (and `b`).
pub(super) fn post_process(
    pp: Option<&PostProcessor>,
    vocab: &Vocab,
    a: Encoding,
    b: Option<Encoding>,
    add_special_tokens: bool,
) -> Result<Encoding> {
    let mut parts: Vec<Part> = std::iter::once(a).chain(b).map(Part::new).collect();
    match pp {
        // Without a post-processor the reference numbers the inputs of a pair, not their
        // overflowing parts (whose sequence ids then all read 0 after the merge).
        None => {
            if parts.len() == 2 {
                parts.iter_mut().enumerate().for_each(|(i, p)| p.set_sequence(i));
            }
        }
        Some(pp) => {
            for (i, p) in parts.iter_mut().enumerate() {
                p.set_sequence(i);
                p.over.iter_mut().for_each(|o| o.set_sequence(i));
                p.enc.set_type_ids(i as u32);
            }
            parts = apply(pp, parts, vocab, add_special_tokens)?;
        }
    }
    Ok(parts.into_iter().fold(Part::empty(vocab), Part::merged).finish())
}

fn apply(pp: &PostProcessor, mut parts: Vec<Part>, vocab: &Vocab, add: bool) -> Result<Vec<Part>> {
    match pp {
        PostProcessor::ByteLevel(bl) => {
            for (i, p) in parts.iter_mut().enumerate() {
                if bl.trim_offsets {
                    p.trim(bl.add_prefix_space);
                }
                p.set_sequence(i);
            }
            Ok(parts)
        }
        PostProcessor::Roberta { sep, cls, trim_offsets, add_prefix_space } => {
            for p in parts.iter_mut() {
                if *trim_offsets {
                    p.trim(*add_prefix_space);
                }
                p.enc.set_type_ids(0);
            }
            if !add {
                return Ok(parts);
            }
            let wrap = |(i, p)| match i {
                0 => wrapped(p, Some((cls, 0)), (sep, 0), 0, Some(0)),
                _ => wrapped(p, Some((sep, 0)), (sep, 0), 1, Some(0)),
            };
            Ok(parts.into_iter().enumerate().map(wrap).collect())
        }
        PostProcessor::Bert { sep, cls } => {
            if !add {
                return Ok(parts);
            }
            let wrap = |(i, p)| match i {
                0 => wrapped(p, Some((cls, 0)), (sep, 0), 0, None),
                _ => wrapped(p, None, (sep, 1), 1, None),
            };
            Ok(parts.into_iter().enumerate().map(wrap).collect())
        }
        PostProcessor::Template { single, pair, specials } => {
            template(single, pair, specials, parts, vocab, add)
        }
        PostProcessor::Sequence(steps) => {
            for s in steps {
                parts = apply(s, parts, vocab, add)?;
            }
            Ok(parts)
        }
    }
}

/// `before`, the tokens of `p`, `after`, as BERT and RoBERTa put their tokens around an input:
/// the input's tokens become plain (not special, attended; of type `inner_type` when given),
/// its range is its own tokens, for input `seq`. Its overflowing parts are wrapped alike (and
/// theirs dropped).
fn wrapped(
    p: Part,
    before: Option<(&Special, u32)>,
    after: (&Special, u32),
    seq: usize,
    inner_type: Option<u32>,
) -> Part {
    let wrap = |mut enc: Encoding| {
        enc.set_plain(inner_type);
        if let Some(((text, id), type_id)) = before {
            enc.prepend_special(*id, text, type_id);
        }
        let ((text, id), type_id) = after;
        enc.push_special(*id, text, type_id);
        let range = before.is_some() as usize..enc.len() - 1;
        Part { enc, ranges: vec![(seq, range)], over: Vec::new() }
    };
    let over = p.over.into_iter().map(|o| wrap(o.enc)).collect();
    Part { over, ..wrap(p.enc) }
}

/// A template applied to one encoding (`single`) or two (`pair`): one encoding per piece, each
/// input's with the piece's type id (its overflowing parts keep theirs).
fn template(
    single: &[TemplatePiece],
    pair: &[TemplatePiece],
    specials: &std::collections::HashMap<String, SpecialTokenDef>,
    mut parts: Vec<Part>,
    vocab: &Vocab,
    add: bool,
) -> Result<Vec<Part>> {
    let template = match parts.len() {
        1 => single,
        2 => pair,
        n => {
            return Err(Error::Input(format!(
                "a TemplateProcessing step of the post-processor was given {n} encodings by the steps \
                 before it; it applies to one or two"
            )))
        }
    };
    let mut out = Vec::with_capacity(template.len());
    for piece in template {
        match piece {
            TemplatePiece::Sequence { seq, type_id } => {
                let p = parts.get_mut(*seq).ok_or_else(|| {
                    Error::Input("the post-processor's template names an input it was not given".into())
                })?;
                p.enc.set_type_ids(*type_id);
                p.set_sequence(*seq);
                out.push(p.clone());
            }
            TemplatePiece::Special { id, type_id } if add => {
                let mut p = Part::empty(vocab);
                let d = &specials[id];
                for (id, text) in d.ids.iter().zip(&d.tokens) {
                    p.enc.push_special(*id, text, *type_id);
                }
                out.push(p);
            }
            TemplatePiece::Special { .. } => {}
        }
    }
    Ok(out)
}
