//! Models: how a word becomes tokens.
//!
//! [`Model`] is what the pipeline calls, whatever the file's model: [`Model::tokenize`] turns
//! one pre-token into [`Token`]s (ids with byte ranges in the pre-token, as the reference's
//! `Model::tokenize` returns them), and the vocabulary answers id ↔ token. WordPiece also has
//! its own fast entry ([`wordpiece::WordPiece::lookup`]) for the fused BERT paths.

pub mod bpe;
#[cfg(feature = "general")]
pub(crate) mod cache;
#[cfg(feature = "general")]
pub mod sentencepiece;
#[cfg(feature = "general")]
pub mod unigram;
#[cfg(feature = "general")]
pub mod wordlevel;
pub mod wordpiece;

/// A number no other owner of cache entries has had in this process: the models, normalizers,
/// matchers and tokenizers that fill the per-thread caches name their entries with it.
pub fn new_owner_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

use std::collections::HashMap;
use std::sync::Arc;

#[cfg(feature = "general")]
use self::bpe::general::Bpe;
#[cfg(feature = "general")]
use self::bpe::sentencepiece::SentencePieceBpe;
#[cfg(feature = "general")]
use self::unigram::Unigram;
#[cfg(feature = "general")]
use self::wordlevel::WordLevel;
use self::wordpiece::WordPiece;
use crate::error::{Error, Result};

/// One token of a pre-token: its id and its byte range in the pre-token. The range may reach
/// past the pre-token's end: BPE's byte fallback counts the bytes of the subword prefix and
/// suffix too, as the reference does (see [`crate::tokenizer`] for what offsets that gives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub id: u32,
    pub start: u32,
    pub end: u32,
    /// Whether this is the unk token standing for text the vocabulary lacks.
    pub unk: bool,
}

#[derive(Clone, Debug)]
pub enum Model {
    WordPiece(WordPiece),
    #[cfg(feature = "general")]
    Bpe(Bpe),
    #[cfg(feature = "general")]
    WordLevel(WordLevel),
    #[cfg(feature = "general")]
    Unigram(UnigramModel),
    /// SentencePiece's BPE, read from a `.model` file.
    #[cfg(feature = "general")]
    SentencePieceBpe(SentencePieceBpeModel),
}

/// SentencePiece's BPE with the maps the pipeline reads from every model.
#[cfg(feature = "general")]
#[derive(Clone, Debug)]
pub struct SentencePieceBpeModel {
    pub model: SentencePieceBpe,
    pub vocab: HashMap<String, u32>,
    pub vocab_r: ReverseVocab,
}

#[cfg(feature = "general")]
impl SentencePieceBpeModel {
    pub fn new(model: SentencePieceBpe) -> Result<Self> {
        let vocab: HashMap<String, u32> =
            model.pieces().iter().enumerate().map(|(i, p)| (p.0.clone(), i as u32)).collect();
        let vocab_r = ReverseVocab::new(&vocab)?;
        Ok(SentencePieceBpeModel { model, vocab, vocab_r })
    }
}

/// A Unigram model with the maps the pipeline reads from every model.
#[cfg(feature = "general")]
#[derive(Clone, Debug)]
pub struct UnigramModel {
    pub model: Unigram,
    pub vocab: HashMap<String, u32>,
    pub vocab_r: ReverseVocab,
}

#[cfg(feature = "general")]
impl UnigramModel {
    pub fn new(model: Unigram) -> Result<Self> {
        // A piece listed twice keeps its last id, as the reference's token_to_id does.
        let vocab: HashMap<String, u32> =
            model.vocab().iter().enumerate().map(|(i, (p, _))| (p.clone(), i as u32)).collect();
        let mut vocab_r = ReverseVocab::new(&vocab)?;
        // Every id names its own piece, repeated pieces included.
        vocab_r.tokens = Arc::new(model.vocab().iter().map(|(p, _)| Arc::from(p.as_str())).collect());
        Ok(UnigramModel { model, vocab, vocab_r })
    }
}

impl From<WordPiece> for Model {
    fn from(m: WordPiece) -> Self {
        Model::WordPiece(m)
    }
}

impl Model {
    /// Appends the tokens of one pre-token (`piece`, not empty) to `out`. Fails where the
    /// reference fails: a char or word the vocabulary lacks when the unk token is missing.
    pub fn tokenize(&self, piece: &str, out: &mut Vec<Token>) -> Result<()> {
        match self {
            Model::WordPiece(m) => {
                m.tokenize(piece, out);
                Ok(())
            }
            #[cfg(feature = "general")]
            Model::Bpe(m) => m.tokenize(piece, out),
            #[cfg(feature = "general")]
            Model::WordLevel(m) => m.tokenize(piece, out),
            #[cfg(feature = "general")]
            Model::Unigram(m) => m.model.tokenize(piece, out),
            #[cfg(feature = "general")]
            Model::SentencePieceBpe(m) => {
                let unk = m.model.unk_id();
                m.model.tokenize(piece, |id, start, end| {
                    out.push(Token { id, start: start as u32, end: end as u32, unk: id == unk })
                })
            }
        }
    }

    /// The ids of [`Model::tokenize`]'s tokens of `piece`, appended to `ids`, with no tokens
    /// built where the model can skip them; `tokens` is scratch for the others.
    pub fn tokenize_ids(&self, piece: &str, tokens: &mut Vec<Token>, ids: &mut Vec<u32>) -> Result<()> {
        match self {
            #[cfg(feature = "general")]
            Model::Unigram(m) => m.model.tokenize_ids(piece, ids),
            #[cfg(feature = "general")]
            Model::SentencePieceBpe(m) => m.model.tokenize(piece, |id, _, _| ids.push(id)),
            #[cfg(all(feature = "general", not(target_arch = "wasm32")))]
            Model::WordPiece(m) => {
                m.tokenize_ids(piece, ids);
                Ok(())
            }
            _ => {
                tokens.clear();
                self.tokenize(piece, tokens)?;
                ids.extend(tokens.iter().map(|t| t.id));
                Ok(())
            }
        }
    }

    /// How a Unigram model splits `piece`: its lattice ([`Unigram::lattice`]); other models
    /// have none.
    #[cfg(feature = "general")]
    pub fn lattice(&self, piece: &str, max_nodes: usize) -> Result<unigram::Lattice> {
        match self {
            Model::Unigram(m) => m.model.lattice(piece, max_nodes),
            _ => Err(Error::Input(format!("a {} model has no lattice, only Unigram has", self.type_name()))),
        }
    }

    /// How a BPE model merges `piece` ([`Bpe::merge_trace`], SentencePiece's by score); other
    /// models have no merges.
    #[cfg(feature = "general")]
    pub fn merge_trace(&self, piece: &str) -> Result<bpe::general::MergeTrace> {
        match self {
            Model::Bpe(m) => m.merge_trace(piece),
            Model::SentencePieceBpe(m) => m.model.merge_trace(piece),
            _ => Err(Error::Input(format!("a {} model has no merges, only BPE has", self.type_name()))),
        }
    }

    /// How WordPiece searches `piece` ([`WordPiece::steps`]); other models do not search so.
    pub fn wordpiece_steps(
        &self,
        piece: &str,
        max_attempts: usize,
    ) -> Result<wordpiece::steps::WordPieceSteps> {
        match self {
            Model::WordPiece(m) => Ok(m.steps(piece, max_attempts)),
            #[allow(unreachable_patterns)]
            _ => Err(Error::Input(format!("a {} model is not WordPiece", self.type_name()))),
        }
    }

    /// The model's type as a tokenizer.json names it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Model::WordPiece(_) => "WordPiece",
            #[cfg(feature = "general")]
            Model::Bpe(_) => "BPE",
            #[cfg(feature = "general")]
            Model::WordLevel(_) => "WordLevel",
            #[cfg(feature = "general")]
            Model::Unigram(_) => "Unigram",
            #[cfg(feature = "general")]
            Model::SentencePieceBpe(_) => "BPE",
        }
    }

    /// The shared vocabulary: token text → id.
    pub fn vocab(&self) -> &HashMap<String, u32> {
        match self {
            Model::WordPiece(m) => &m.vocab,
            #[cfg(feature = "general")]
            Model::Bpe(m) => &m.vocab,
            #[cfg(feature = "general")]
            Model::WordLevel(m) => &m.vocab,
            #[cfg(feature = "general")]
            Model::Unigram(m) => &m.vocab,
            #[cfg(feature = "general")]
            Model::SentencePieceBpe(m) => &m.vocab,
        }
    }

    /// id → token text ("" for an id no token has), shared with every Encoding.
    pub fn vocab_r(&self) -> &Arc<Vec<Arc<str>>> {
        match self {
            Model::WordPiece(m) => &m.vocab_r,
            #[cfg(feature = "general")]
            Model::Bpe(m) => &m.vocab_r.tokens,
            #[cfg(feature = "general")]
            Model::WordLevel(m) => &m.vocab_r.tokens,
            #[cfg(feature = "general")]
            Model::Unigram(m) => &m.vocab_r.tokens,
            #[cfg(feature = "general")]
            Model::SentencePieceBpe(m) => &m.vocab_r.tokens,
        }
    }

    /// Whether a token's text is always `vocab_r()[id]`, so that Encodings need not keep it.
    pub fn ids_name_tokens(&self) -> bool {
        match self {
            Model::WordPiece(m) => m.ids_name_tokens,
            // The reference names a BPE token by its id (whichever key holds a repeated one).
            #[cfg(feature = "general")]
            Model::Bpe(_) => true,
            #[cfg(feature = "general")]
            Model::WordLevel(m) => m.vocab_r.ids_name_tokens,
            // The reference names a Unigram token by the text it covers (a byte token by its
            // <0xXX> piece).
            #[cfg(feature = "general")]
            Model::Unigram(_) => false,
            // A run of unknown chars is named by its text.
            #[cfg(feature = "general")]
            Model::SentencePieceBpe(_) => false,
        }
    }

    /// The text the reference gives token `t` of `piece`, for models whose ids do not name
    /// their tokens.
    pub fn token_text(&self, piece: &str, t: &Token) -> Arc<str> {
        match self {
            Model::WordPiece(m) => m.token_text_bytes(piece, t),
            #[cfg(feature = "general")]
            Model::Bpe(m) => m.vocab_r.tokens[t.id as usize].clone(),
            #[cfg(feature = "general")]
            Model::WordLevel(m) => m.token_text(piece, t),
            #[cfg(feature = "general")]
            Model::Unigram(m) => Arc::from(m.model.token_value(piece, t)),
            #[cfg(feature = "general")]
            Model::SentencePieceBpe(m) => match t.unk {
                true => Arc::from(&piece[t.start as usize..t.end as usize]),
                false => m.vocab_r.tokens[t.id as usize].clone(),
            },
        }
    }

    /// The token of `id`, when the vocabulary has one.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        let t = self.vocab_r().get(id as usize)?;
        // "" fills the ids no token has, unless "" is itself the token of this id.
        (!t.is_empty() || self.vocab().get("") == Some(&id)).then_some(&**t)
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab().get(token).copied()
    }

    /// The number of tokens of the vocabulary (the reference's `get_vocab_size`).
    pub fn vocab_size(&self) -> usize {
        self.vocab().len()
    }

    /// The model when it is WordPiece (the fused BERT paths need it).
    #[inline]
    pub fn wordpiece(&self) -> Option<&WordPiece> {
        match self {
            Model::WordPiece(m) => Some(m),
            #[cfg(feature = "general")]
            _ => None,
        }
    }
}

/// A vocabulary's reverse map: id → token, with "" where no token has the id.
#[derive(Clone, Debug)]
pub struct ReverseVocab {
    pub tokens: Arc<Vec<Arc<str>>>,
    /// Whether each id is held by one token only (else a token's text is not its id's).
    pub ids_name_tokens: bool,
}

impl ReverseVocab {
    pub fn new(vocab: &HashMap<String, u32>) -> Result<Self> {
        let Some(&max_id) = vocab.values().max() else {
            return Ok(ReverseVocab { tokens: Arc::new(Vec::new()), ids_name_tokens: true });
        };
        let max_id = max_id as usize;
        if max_id >= 1 << 24 && max_id > vocab.len() * 16 {
            return Err(Error::Invalid(format!(
                "vocabulary ids are implausibly sparse (largest id {max_id} for {} tokens)",
                vocab.len()
            )));
        }
        let mut slots: Vec<Option<&str>> = vec![None; max_id + 1];
        let mut ids_name_tokens = true;
        for (tok, &id) in vocab {
            ids_name_tokens &= slots[id as usize].replace(tok).is_none();
        }
        if !ids_name_tokens {
            // A repeated id: resolved in a fixed order (the greatest token wins), the same
            // every run whatever the map's order.
            for (tok, &id) in vocab {
                let slot = &mut slots[id as usize];
                if slot.is_some_and(|t| t < tok.as_str()) {
                    *slot = Some(tok);
                }
            }
        }
        let empty: Arc<str> = Arc::from("");
        let tokens = slots.into_iter().map(|t| t.map_or_else(|| empty.clone(), Arc::from)).collect();
        Ok(ReverseVocab { tokens: Arc::new(tokens), ids_name_tokens })
    }
}
