use std::collections::HashMap;
use std::sync::Arc;

use super::*;
use crate::testing::Rng;

const TEXTS: &[&str] =
    &["a", "\u{120}", "\u{120}b", "\u{120}\u{120}", "c\u{120}", " x ", "\u{3000}y", "\u{120}\n", "é", ""];

fn vocab() -> Vocab {
    Arc::new(TEXTS.iter().map(|&t| Arc::from(t)).chain(["[CLS]", "[SEP]"].map(Arc::from)).collect())
}

const CLS: u32 = TEXTS.len() as u32;
const SEP: u32 = CLS + 1;

/// An input of up to 7 tokens of [`TEXTS`], some with offsets that start at 0, one now and then
/// an added token whose text the vocabulary does not name.
fn input(r: &mut Rng, vocab: &Vocab, seq: u32) -> Encoding {
    let mut e = Encoding::default();
    e.texts.vocab = Some(vocab.clone());
    let mut at = 0;
    for word in 0..r.next() % 8 {
        let id = (r.next() % TEXTS.len() as u64) as u32;
        let len = TEXTS[id as usize].chars().count() as u32;
        let start = if r.next().is_multiple_of(5) { 0 } else { at };
        let text = (r.next().is_multiple_of(7)).then(|| Arc::from(" added "));
        e.push_token(id, text.as_ref(), (start, start + len), word as u32);
        at += len;
    }
    e.fill_sequence(seq, seq);
    e
}

fn byte_level(r: &mut Rng) -> PostProcessor {
    PostProcessor::ByteLevel(ByteLevel {
        add_prefix_space: r.next().is_multiple_of(2),
        trim_offsets: !r.next().is_multiple_of(3),
        use_regex: true,
    })
}

fn adder(r: &mut Rng) -> PostProcessor {
    let sep: Special = ("[SEP]".into(), SEP);
    let cls: Special = ("[CLS]".into(), CLS);
    match r.next() % 3 {
        0 => PostProcessor::Bert { sep, cls },
        1 => PostProcessor::Roberta {
            sep,
            cls,
            trim_offsets: r.next().is_multiple_of(2),
            add_prefix_space: r.next().is_multiple_of(2),
        },
        _ => {
            let special = |id: &str, type_id| TemplatePiece::Special { id: id.into(), type_id };
            let seq = |seq, type_id| TemplatePiece::Sequence { seq, type_id };
            let def = |id, token: &str| SpecialTokenDef { ids: vec![id], tokens: vec![token.into()] };
            PostProcessor::Template {
                single: vec![special("[CLS]", 0), seq(0, 2), special("[SEP]", 0)],
                pair: vec![
                    special("[CLS]", 0),
                    seq(0, 0),
                    special("[SEP]", 0),
                    seq(1, 1),
                    special("[SEP]", 1),
                ],
                specials: HashMap::from([
                    ("[CLS]".into(), def(CLS, "[CLS]")),
                    ("[SEP]".into(), def(SEP, "[SEP]")),
                ]),
            }
        }
    }
}

/// Every field, as the getters give it.
fn fields(e: &Encoding) -> String {
    format!(
        "ids {:?}\ntokens {:?}\noffsets {:?}\ntypes {:?}\nseqs {:?}\nspecial {:?}\nattention {:?}\nwords {:?}\nn {}",
        e.ids().collect::<Vec<_>>(),
        e.tokens(),
        e.offsets().collect::<Vec<_>>(),
        e.type_ids().collect::<Vec<_>>(),
        e.sequence_ids().collect::<Vec<_>>(),
        e.special_tokens_mask().collect::<Vec<_>>(),
        e.attention_mask().collect::<Vec<_>>(),
        e.word_ids().collect::<Vec<_>>(),
        e.n_sequences()
    )
}

/// The in-place path gives what the step-by-step one gives, on every shape it takes.
#[test]
fn in_place_path_matches_the_step_by_step_one() {
    let vocab = vocab();
    let mut r = Rng(0x2545_F491_4F6C_DD1D);
    let mut checked = 0;
    for _ in 0..3000 {
        let mut steps: Vec<PostProcessor> = (0..r.next() % 3).map(|_| byte_level(&mut r)).collect();
        if !r.next().is_multiple_of(4) {
            steps.push(adder(&mut r));
        }
        let pp = match (steps.len(), r.next() % 3) {
            (0, 0) => None,
            (1, 0) => steps.pop(),
            _ => Some(PostProcessor::Sequence(steps)),
        };
        let a = input(&mut r, &vocab, 0);
        let b = (r.next().is_multiple_of(2)).then(|| input(&mut r, &vocab, 1));
        let add = !r.next().is_multiple_of(4);
        assert!(simple_shape(pp.as_ref(), b.is_some()).is_some(), "{pp:?}");
        let want = general::post_process(pp.as_ref(), &vocab, a.clone(), b.clone(), add).unwrap();
        let got = post_process(pp.as_ref(), &vocab, a, b, add).unwrap();
        assert_eq!(fields(&got), fields(&want), "{pp:?}, add_special_tokens {add}");
        checked += 1;
    }
    assert_eq!(checked, 3000);
}

fn trimmed(texts: &[&str], offsets: &[(u32, u32)], add_prefix_space: bool) -> Vec<(u32, u32)> {
    let mut e = Encoding::default();
    for (i, (t, o)) in texts.iter().zip(offsets).enumerate() {
        e.push_token(0, Some(&Arc::from(*t)), *o, i as u32);
    }
    e.fill_sequence(0, 0);
    e.trim_offsets(add_prefix_space);
    e.offsets().collect()
}

#[test]
fn trimming_drops_a_char_of_offset_per_space() {
    // "ĠĠab": two leading spaces trimmed; "cĠ": one trailing; "Ġ": start moves to the end,
    // then the end may not move before it.
    let t = ["\u{120}\u{120}ab", "c\u{120}", "\u{120}"];
    assert_eq!(trimmed(&t, &[(0, 4), (4, 6), (6, 7)], false), [(2, 4), (4, 5), (7, 7)]);
    // With a prefix space, the first token keeps one leading space but not two.
    assert_eq!(trimmed(&["\u{120}a", "\u{120}b"], &[(0, 2), (2, 4)], true), [(0, 2), (3, 4)]);
    assert_eq!(trimmed(&["\u{120}\u{120}a"], &[(0, 3)], true), [(2, 3)]);
    // A later token whose offsets start at 0 counts as a first one.
    assert_eq!(trimmed(&["x", "\u{120}b"], &[(0, 1), (0, 2)], true), [(0, 1), (0, 2)]);
    // Any white space counts, not only the byte-level space; other chars do not.
    assert_eq!(trimmed(&["\n a\u{3000}", "\u{10A}b"], &[(0, 4), (4, 6)], false), [(2, 3), (4, 6)]);
    // The end moves back only when it is at least the count, and never before the start.
    assert_eq!(trimmed(&["a\u{120}\u{120}\u{120}"], &[(0, 2)], false), [(0, 2)]);
    assert_eq!(trimmed(&["\u{120}\u{120}"], &[(5, 6)], false), [(6, 6)]);
}

#[test]
fn template_ids_around_one_input() {
    let mut r = Rng(7);
    let roberta = PostProcessor::Roberta {
        sep: ("</s>".into(), 2),
        cls: ("<s>".into(), 0),
        trim_offsets: true,
        add_prefix_space: false,
    };
    assert_eq!(single_template_ids(Some(&roberta)), Some((vec![0], vec![2])));
    let bl = byte_level(&mut r);
    assert_eq!(single_template_ids(Some(&bl)), Some((vec![], vec![])));
    // Bert inside a Sequence after Roberta wraps what Roberta gave.
    let bert = PostProcessor::Bert { sep: ("[SEP]".into(), 5), cls: ("[CLS]".into(), 4) };
    let both = PostProcessor::Sequence(vec![roberta.clone(), bl, bert]);
    assert_eq!(single_template_ids(Some(&both)), Some((vec![4, 0], vec![2, 5])));
    assert_eq!(added_tokens_count(Some(&both), false), 4);
    assert_eq!(added_tokens_count(Some(&both), true), 7);
    // A template that repeats the input has no such ids; the whole post-processor gives them.
    let twice = PostProcessor::Template {
        single: vec![
            TemplatePiece::Sequence { seq: 0, type_id: 0 },
            TemplatePiece::Sequence { seq: 0, type_id: 1 },
        ],
        pair: vec![],
        specials: HashMap::new(),
    };
    assert_eq!(single_template_ids(Some(&twice)), None);
    assert_eq!(add_special_ids(Some(&twice), None, vec![8, 9]).unwrap(), [8, 9, 8, 9]);
}
