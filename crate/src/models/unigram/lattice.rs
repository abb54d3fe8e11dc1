//! The lattice of one piece laid open: every node the Viterbi search weighs, and the path it
//! keeps (the page's Unigram model step).

use serde::Serialize;

use super::Unigram;
use crate::error::Result;
use crate::models::Token;
use crate::unicode::char_len;

/// One node of the lattice: a vocabulary piece found in the text, or an unknown char.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatticeNode {
    /// Char offsets in the piece.
    pub start: u32,
    pub end: u32,
    /// The vocabulary id; an unknown char has the unk id (none in a model without one).
    pub id: Option<u32>,
    /// The vocabulary entry; for an unknown char, the char.
    pub piece: String,
    /// The score the search adds for it (an unknown char: the lowest score minus 10).
    pub score: f64,
    pub unknown: bool,
    /// On the best path.
    pub best: bool,
}

/// One token the model emits for the piece (after unknown chars are fused, and spelled as
/// bytes with byte fallback).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatticeToken {
    /// Char offsets in the piece (the tokens of one fused unknown run share them).
    pub start: u32,
    pub end: u32,
    pub id: u32,
    /// The token's text as the reference reports it.
    pub token: String,
}

/// The lattice of one piece, its nodes listed from the left until `max_nodes`.
#[derive(Clone, Debug, Serialize)]
pub struct Lattice {
    /// The piece's length in chars.
    pub chars: u32,
    /// Nodes are listed for every start below this char (all of them unless `truncated`).
    pub shown_chars: u32,
    pub truncated: bool,
    /// By start, then end.
    pub nodes: Vec<LatticeNode>,
    /// The tokens the model emits that start below `shown_chars`.
    pub tokens: Vec<LatticeToken>,
    /// The best path's score: the sum of its nodes' scores over the whole piece.
    pub score: f64,
}

impl Unigram {
    /// The lattice of `piece` (a pre-token, as the pipeline hands it to the model), with the
    /// nodes of its first starts until there are `max_nodes` (those of the first char always).
    /// The best path is the search's own, and `tokens` what [`Unigram::tokenize`] emits; the
    /// error is its error (an unknown char in a model without an unk id).
    pub fn lattice(&self, piece: &str, max_nodes: usize) -> Result<Lattice> {
        let mut emitted = Vec::new();
        self.tokenize(piece, &mut emitted)?;
        let mut path = Vec::new();
        if self.spm {
            self.best_path::<f32, false>(piece, 0.0, &mut Vec::new(), &mut Vec::new(), &mut path)?;
        } else {
            self.best_path::<f64, false>(piece, 0.0, &mut Vec::new(), &mut Vec::new(), &mut path)?;
        }
        // A path node is an unknown char unless its text is the piece of its id.
        let node_score = |t: &Token| {
            let text = &piece.as_bytes()[t.start as usize..t.end as usize];
            if self.trie.get(text) == Some(t.id) {
                self.scores[t.id as usize]
            } else {
                self.unk_score
            }
        };
        let score = path.iter().map(node_score).sum();
        let bytes = piece.as_bytes();
        let chars_in = |from: usize, to: usize| bytes[from..to].iter().filter(|&&b| b & 0xC0 != 0x80).count();
        let mut nodes: Vec<LatticeNode> = Vec::new();
        let mut next_best = path.iter().peekable();
        let (mut start, mut at_char) = (0usize, 0u32);
        let mut truncated = false;
        while start < bytes.len() {
            // By end: the trie finds pieces shortest first, and an unknown char ends before any.
            let mut here = Vec::new();
            let one_char = self.pieces_at(bytes, start, |end, id| here.push((end, Some(id))));
            let char_end = start + char_len(bytes[start]);
            if !one_char {
                here.insert(0, (char_end, self.unk_id));
            }
            if !nodes.is_empty() && nodes.len() + here.len() > max_nodes {
                truncated = true;
                break;
            }
            while next_best.next_if(|t| (t.start as usize) < start).is_some() {}
            let on_path = next_best.peek().filter(|t| t.start as usize == start);
            for (end, id) in here {
                let unknown = end == char_end && !one_char;
                nodes.push(LatticeNode {
                    start: at_char,
                    end: at_char + chars_in(start, end) as u32,
                    id,
                    piece: match id {
                        Some(id) if !unknown => self.pieces[id as usize].0.clone(),
                        _ => piece[start..end].to_owned(),
                    },
                    score: if unknown { self.unk_score } else { self.scores[id.unwrap_or(0) as usize] },
                    unknown,
                    best: on_path.is_some_and(|t| t.end as usize == end && Some(t.id) == id),
                });
            }
            start = char_end;
            at_char += 1;
        }
        let shown_chars = at_char;
        // The emitted tokens' byte offsets to chars: they come in order, so one cursor does.
        let (mut byte, mut char_at) = (0usize, 0u32);
        let mut tokens = Vec::new();
        for t in &emitted {
            char_at += chars_in(byte, t.start as usize) as u32;
            byte = t.start as usize;
            if char_at >= shown_chars {
                break;
            }
            tokens.push(LatticeToken {
                start: char_at,
                end: char_at + chars_in(byte, t.end as usize) as u32,
                id: t.id,
                token: self.token_value(piece, t).to_owned(),
            });
        }
        let chars = shown_chars + chars_in(start, bytes.len()) as u32;
        Ok(Lattice { chars, shown_chars, truncated, nodes, tokens, score })
    }
}
