//! WordPiece: greedy longest match from the left, `##` on continuations; a word with any
//! unmatched position, or longer than `max_input_chars_per_word`, becomes one unk token.

pub mod steps;
pub mod trie;
pub mod vocab_index;
pub mod word_cache;

use crate::error::{Error, Result};
use crate::models::Token;
use std::collections::HashMap;
use std::sync::Arc;
use trie::Trie;
use vocab_index::{load_short, small_key, ShortIndex, SmallIndex, SHORT, SMALL};
use word_cache::WordCache;

/// A `one_char` entry whose word the table does not answer (the char is an entry too long
/// for `max_input_chars_per_word` by bytes, or the limit is 0).
const NO_ID: u32 = u32::MAX;
/// A `one_char` entry whose char is not a vocabulary entry: the word is one unk token (a
/// one-char word has no other piece). Chinese text has many such words (in 1 MB of the
/// Chinese corpus, 52,000 ideographs that bert-base-uncased lacks).
const UNK_CHAR: u32 = u32::MAX - 1;
/// The first code point of `one_char`'s 3-byte part, and how many code points it holds
/// (after the 0x800 entries of the 1- and 2-byte chars).
const ONE_CHAR_CJK: u32 = 0x4000;
const ONE_CHAR_CJK_LEN: usize = 0x6000;

#[derive(Clone, Debug)]
pub struct WordPiece {
    pub vocab: HashMap<String, u32>,
    /// id -> token text, shared by every Encoding that names it (no allocation per token).
    pub vocab_r: Arc<Vec<Arc<str>>>,
    /// Whether `vocab_r[id]` is the one key with that id: then a token's text is found
    /// from its id. Otherwise (a file with repeated ids) it is rebuilt from the input.
    pub ids_name_tokens: bool,
    pub unk_token: Arc<str>,
    pub unk_id: u32,
    pub continuing_subword_prefix: String,
    pub max_input_chars_per_word: usize,
    /// Word-initial pieces of up to 8 bytes (and no longer than the char limit), for the
    /// whole words of ASCII text in one cheap probe.
    small: SmallIndex,
    /// Word-initial pieces of up to 16 bytes, for whole words in one probe.
    initial: ShortIndex,
    /// Every word-initial piece, for the longest match in one walk.
    initial_trie: Trie,
    /// Continuation pieces, keyed without their prefix.
    continuation_trie: Trie,
    /// The id of each one-char word that is a vocabulary entry, by char, for the words
    /// that are most often one char: ASCII (punctuation, digits; index = the byte), the
    /// 2-byte chars U+0080..U+07FF (one-letter words of Cyrillic, Greek, Arabic...; index =
    /// the code point), and the 3-byte chars with lead bytes E4..E9, U+4000..U+9FFF, which
    /// hold the CJK ideographs (index = 0x800 + code point - 0x4000). [`NO_ID`] where the
    /// char is not an entry ([`UNK_CHAR`] where that makes the word the unk token).
    one_char: Box<[u32]>,
    /// Identifies this model's entries in the per-thread word cache (clones share it: they
    /// tokenize alike).
    pub cache_id: u64,
}

/// One token of a word: its id and its char range within the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubToken {
    pub id: u32,
    pub char_start: usize,
    pub char_end: usize,
}

/// A word whose bytes are followed by [`SHORT`] more readable bytes (of any value) in the
/// same buffer. The lookups load a key as whole 8- and 16-byte words from the word's start,
/// past its end, and mask off what they read there: no per-byte length checks, no copy.
///
/// Invariant: `ptr` points into a buffer borrowed for `'a` that holds `len + SHORT` bytes
/// from `ptr` on. The constructors establish it; [`PaddedWord::padded`] relies on it. Two
/// machine words, so that it is passed in registers.
#[derive(Clone, Copy, Debug)]
pub struct PaddedWord<'a> {
    ptr: *const u8,
    len: usize,
    buf: std::marker::PhantomData<&'a [u8]>,
}

impl<'a> PaddedWord<'a> {
    /// The word `buf[start..end]`; panics unless `start <= end` and `buf` holds [`SHORT`]
    /// bytes past `end`. (Where the buffer's size bounds `end`, the check compiles to
    /// nothing.)
    #[inline(always)]
    pub fn new(buf: &'a [u8], start: usize, end: usize) -> Self {
        assert!(
            start <= end && SHORT <= buf.len() && end <= buf.len() - SHORT,
            "a word needs {SHORT} bytes of padding"
        );
        // SAFETY: checked just above.
        unsafe { Self::new_unchecked(buf, start, end) }
    }

    /// [`PaddedWord::new`] without the check, for a buffer that keeps its padding itself.
    ///
    /// # Safety
    /// `start <= end` and `end + SHORT <= buf.len()`.
    #[inline(always)]
    pub unsafe fn new_unchecked(buf: &'a [u8], start: usize, end: usize) -> Self {
        debug_assert!(start <= end && end + SHORT <= buf.len());
        // SAFETY: `start <= buf.len()` by the caller's promise.
        let ptr = unsafe { buf.as_ptr().add(start) };
        PaddedWord { ptr, len: end - start, buf: std::marker::PhantomData }
    }

    /// The word's length in bytes.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The word's bytes.
    #[inline(always)]
    pub fn bytes(&self) -> &'a [u8] {
        &self.padded()[..self.len]
    }

    /// The word's bytes and the padding after them.
    #[inline(always)]
    pub fn padded(&self) -> &'a [u8] {
        // SAFETY: the type's invariant: `len + SHORT` bytes from `ptr` on, in a buffer
        // borrowed for 'a.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len + SHORT) }
    }
}

/// What the caller already knows about a word, so that [`WordPiece::lookup`] skips the
/// probes that cannot answer it. A constant at each call site: each site is compiled with
/// only its own probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// Nothing: a one-char word from the one-char table, a word of up to 16 bytes from one
    /// probe of the whole-word index.
    Nothing,
    /// The word is all ASCII (English, code): a one-byte word from the one-char table, one
    /// of up to 8 bytes from one probe of the small index.
    Ascii,
    /// The word is not itself a vocabulary entry that the probes would find: no probe.
    NotWhole,
}

/// Where [`WordPiece::lookup`] puts a word's tokens (an Encoding's tokens, a list of
/// ids...). One method is called per word: `whole` or `unk` inline at the lookup's call
/// site when the probe answers, any of them from the lookup's out-of-line part otherwise.
/// (A sink rather than a returned value: a value would cross that call through memory,
/// which cost the loop of the fused pass 3-6% in callgrind.)
pub trait Sink {
    /// Whether the lookup's inline part also answers a one-char word absent from the
    /// vocabulary (the unk token), else the out-of-line part does: worth it where such words
    /// are common and the extra branch in the caller's loop costs little.
    const UNK_INLINE: bool = true;

    /// The word is itself the vocabulary entry `id`: one token over all its chars.
    fn whole(&mut self, id: u32);
    /// The word is the unk token (whose id is `unk_id`): one token over all its chars.
    fn unk(&mut self, unk_id: u32);
    /// The word's pieces, in order, covering its chars (none is the unk token).
    fn pieces(&mut self, pieces: &[SubToken]);
    /// A word found in the word cache (for sinks that can use the cache's copy of its ids).
    #[inline(always)]
    fn cached(&mut self, cache: &WordCache, hit: word_cache::Hit) {
        match cache.pieces(hit) {
            // (An unk word's entry holds the one unk token.)
            (pieces, true) => self.unk(pieces[0].id),
            (pieces, false) => self.pieces(pieces),
        }
    }
}

/// What the probe found: the word is one vocabulary entry, or the unk token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    Whole(u32),
    Unk,
}

/// Reused buffers: a padded copy of the word (for callers without padding).
#[derive(Default, Debug)]
pub struct Scratch {
    padded: Vec<u8>,
}

impl Scratch {
    /// `word`, copied with the padding a [`PaddedWord`] needs.
    pub fn pad(&mut self, word: &str) -> PaddedWord<'_> {
        self.padded.clear();
        self.padded.extend_from_slice(word.as_bytes());
        self.padded.extend_from_slice(&[0; SHORT]);
        PaddedWord::new(&self.padded, 0, word.len())
    }
}

impl WordPiece {
    pub fn new(
        vocab: HashMap<String, u32>,
        unk_token: &str,
        continuing_subword_prefix: &str,
        max_input_chars_per_word: usize,
    ) -> Result<Self> {
        if vocab.is_empty() {
            return Err(Error::Invalid("the WordPiece vocabulary is empty".into()));
        }
        let unk_id = *vocab
            .get(unk_token)
            .ok_or_else(|| Error::Invalid(format!("the unk token {unk_token:?} is not in the vocabulary")))?;
        let crate::models::ReverseVocab { tokens: vocab_r, ids_name_tokens } =
            crate::models::ReverseVocab::new(&vocab)?;
        // Sorted once for both tries: the keys with the prefix are one run of them, and
        // stripping it keeps their order.
        let mut initial_entries: Vec<(&[u8], u32)> = vocab.iter().map(|(k, &v)| (k.as_bytes(), v)).collect();
        sort_by_key_bytes(&mut initial_entries);
        let prefix = continuing_subword_prefix.as_bytes();
        let from = initial_entries.partition_point(|(k, _)| *k < prefix);
        let continuation_entries: Vec<(&[u8], u32)> = initial_entries[from..]
            .iter()
            .map_while(|&(k, v)| k.strip_prefix(prefix).map(|rest| (rest, v)))
            .collect();
        let initial = ShortIndex::new(initial_entries.iter().copied());
        // Only keys whole_word may answer (no longer in bytes than the char limit).
        let small = SmallIndex::new(
            vocab.iter().filter(|(k, _)| k.len() <= max_input_chars_per_word).map(|(k, &v)| (k.as_str(), v)),
        );
        // A char absent from the vocabulary is a word of one unk token (when one char is
        // not too long a word); an entry's char gets its id below, or NO_ID.
        let absent = if max_input_chars_per_word >= 1 { UNK_CHAR } else { NO_ID };
        let mut one_char = vec![absent; 0x800 + ONE_CHAR_CJK_LEN].into_boxed_slice();
        for k in vocab.keys() {
            let mut cs = k.chars();
            let (Some(_), None) = (cs.next(), cs.next()) else { continue };
            if let Some(at) = one_char_index(k.as_bytes(), k.len()) {
                one_char[at] = NO_ID;
            }
        }
        // Only words whole_word would look up (no longer in bytes than the char limit),
        // and only ids the table can tell apart from NO_ID and UNK_CHAR.
        for (k, &id) in &vocab {
            if id >= UNK_CHAR || k.len() > max_input_chars_per_word {
                continue;
            }
            let mut cs = k.chars();
            let (Some(c), None) = (cs.next(), cs.next()) else { continue };
            if let Some(at) = one_char_index(k.as_bytes(), k.len()) {
                debug_assert_eq!(
                    at,
                    if (c as u32) < 0x800 { c as usize } else { 0x800 + (c as u32 - ONE_CHAR_CJK) as usize }
                );
                one_char[at] = id;
            }
        }
        let initial_trie = Trie::from_sorted(&initial_entries);
        let continuation_trie = Trie::from_sorted(&continuation_entries);
        Ok(WordPiece {
            unk_token: Arc::from(unk_token),
            vocab,
            vocab_r,
            ids_name_tokens,
            unk_id,
            continuing_subword_prefix: continuing_subword_prefix.to_owned(),
            max_input_chars_per_word,
            small,
            initial,
            initial_trie,
            continuation_trie,
            one_char,
            cache_id: crate::models::new_owner_id(),
        })
    }

    /// Parses a `vocab.txt`: one token per line, the id is the line number.
    pub fn parse_vocab_txt(s: &str) -> HashMap<String, u32> {
        let mut vocab = HashMap::new();
        for (i, line) in s.lines().enumerate() {
            // As the reference: trailing whitespace trimmed; a repeated line keeps its last id.
            vocab.insert(line.trim_end().to_owned(), i as u32);
        }
        vocab
    }

    /// Tokenizes `word` (`n_chars` chars) into `sink`: the one way to tokenize a word. The
    /// whole-word probe that `hint` allows is inline (most words of most text are one
    /// vocabulary entry); the rest is a call: through `cache` when there is one (a word seen
    /// before costs one lookup), else the piece-by-piece match. `subs` is scratch space.
    #[inline(always)]
    pub fn lookup<S: Sink>(
        &self,
        word: PaddedWord,
        n_chars: usize,
        hint: Hint,
        cache: Option<&mut WordCache>,
        subs: &mut Vec<SubToken>,
        sink: &mut S,
    ) {
        let id = match hint {
            Hint::Nothing => match self.whole_word(word) {
                Some(Found::Whole(id)) => Some(id),
                Some(Found::Unk) if S::UNK_INLINE => return sink.unk(self.unk_id),
                _ => None,
            },
            Hint::Ascii => self.whole_ascii_word(word),
            Hint::NotWhole => None,
        };
        match id {
            Some(id) => sink.whole(id),
            None => self.not_whole(word, n_chars, cache, subs, sink),
        }
    }

    /// The word when it is itself a vocabulary entry of at most 16 bytes and not too long to
    /// tokenize (most words of most text, for one probe), or one char absent from the
    /// vocabulary (one unk token).
    #[inline(always)]
    fn whole_word(&self, word: PaddedWord) -> Option<Found> {
        if word.len() <= 3 {
            // One char of the table: a direct read instead of a hash probe.
            if let Some(at) = one_char_index(word.padded(), word.len()) {
                let id = self.one_char[at];
                return if id < UNK_CHAR {
                    Some(Found::Whole(id))
                } else if id == UNK_CHAR {
                    Some(Found::Unk)
                } else {
                    None
                };
            }
        }
        self.whole_word_probe(word).map(Found::Whole)
    }

    /// The id of a word that is itself a vocabulary entry, for a word the one-char table does
    /// not answer.
    #[inline(always)]
    fn whole_word_probe(&self, word: PaddedWord) -> Option<u32> {
        let (padded, len) = (word.padded(), word.len());
        // The longest-key bound by the first two bytes only pays off where the vocabulary is
        // thin (most such words miss); for ASCII words, mostly entries, it costs more than
        // the probe it saves.
        if len > SHORT
            || len > self.max_input_chars_per_word
            || (padded[0] >= 0x80 && len > self.initial.max_len_at(padded, 0))
        {
            return None;
        }
        let (k0, k1) = load_short(padded, 0, len);
        self.initial.get(k0, k1, len)
    }

    /// [`WordPiece::whole_word_probe`] for a word known to be all ASCII: a word of one byte
    /// (punctuation, mostly) from the one-char table, one of up to 8 bytes from one probe of
    /// the small index.
    #[inline(always)]
    fn whole_ascii_word(&self, word: PaddedWord) -> Option<u32> {
        let (padded, len) = (word.padded(), word.len());
        debug_assert!(word.bytes().is_ascii());
        if len == 1 {
            // NO_ID and UNK_CHAR (absent from the vocabulary: not_whole makes it the unk
            // token) are both not a whole-word id.
            let id = self.one_char[padded[0] as usize];
            return (id < UNK_CHAR).then_some(id);
        }
        if len <= SMALL {
            return self.small.get(small_key(padded, len));
        }
        if len > SHORT || len > self.max_input_chars_per_word {
            return None;
        }
        let (k0, k1) = load_short(padded, 0, len);
        self.initial.get(k0, k1, len)
    }

    /// A word that the probes did not find: the unk token by length or by an absent char,
    /// else through `cache` when there is one (a word seen before costs one lookup; a new
    /// one is matched piece by piece and recorded), else matched piece by piece.
    #[inline(never)]
    fn not_whole<S: Sink>(
        &self,
        word: PaddedWord,
        n_chars: usize,
        cache: Option<&mut WordCache>,
        subs: &mut Vec<SubToken>,
        sink: &mut S,
    ) {
        if n_chars > self.max_input_chars_per_word {
            return sink.unk(self.unk_id);
        }
        // (The ASCII probe leaves a one-byte word absent from the vocabulary to this.)
        if word.len() <= 3
            && one_char_index(word.padded(), word.len()).is_some_and(|at| self.one_char[at] == UNK_CHAR)
        {
            return sink.unk(self.unk_id);
        }
        subs.clear();
        let unk = match cache {
            Some(c) if word.len() <= word_cache::MAX_KEY => {
                let key = word_cache::Key::new(word);
                if let Some(hit) = c.find(&key, word) {
                    return sink.cached(c, hit);
                }
                let unk = self.tokenize_pieces(word, n_chars, subs);
                c.insert(&key, word, subs, unk);
                unk
            }
            _ => self.tokenize_pieces(word, n_chars, subs),
        };
        if unk {
            sink.unk(self.unk_id)
        } else {
            sink.pieces(subs)
        }
    }

    /// The piece-by-piece match of a word that is not itself a vocabulary entry; true (with
    /// `out` holding the one unk token) when a position has no piece.
    fn tokenize_pieces(&self, word: PaddedWord, n_chars: usize, out: &mut Vec<SubToken>) -> bool {
        let bytes = word.bytes();
        let len = bytes.len();
        let ascii = len == n_chars;
        let mark = out.len();
        let mut start = 0usize;
        let mut start_char = 0usize;
        while start < len {
            let trie = if start == 0 { &self.initial_trie } else { &self.continuation_trie };
            // Vocabulary keys are whole UTF-8 chars, so a key matching the word's bytes ends
            // on a char boundary of the word: no boundary check is needed.
            let found = trie.longest(&bytes[start..]).map(|(id, n)| (id, start + n));
            match found {
                Some((id, end)) => {
                    let nc = if ascii {
                        end - start
                    } else {
                        bytes[start..end].iter().filter(|&&b| (b & 0xC0) != 0x80).count()
                    };
                    out.push(SubToken { id, char_start: start_char, char_end: start_char + nc });
                    start = end;
                    start_char += nc;
                }
                None => {
                    out.truncate(mark);
                    out.push(SubToken { id: self.unk_id, char_start: 0, char_end: n_chars });
                    return true;
                }
            }
        }
        false
    }

    /// The token text of a sub-token of `word`, as the reference reports it (the matched
    /// piece, with the continuation prefix when it doesn't start the word).
    pub fn token_text(&self, word: &str, s: &SubToken) -> Arc<str> {
        if self.ids_name_tokens {
            return self.vocab_r[s.id as usize].clone();
        }
        let piece: String = word.chars().skip(s.char_start).take(s.char_end - s.char_start).collect();
        if s.char_start > 0 {
            Arc::from(format!("{}{}", self.continuing_subword_prefix, piece))
        } else {
            Arc::from(piece)
        }
    }

    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.vocab_r.get(id as usize).map(|s| &**s)
    }

    /// The ids of [`WordPiece::tokenize`]'s tokens of `piece`, appended to `ids`, through the
    /// per-thread word cache.
    #[cfg(all(feature = "general", not(target_arch = "wasm32")))]
    pub fn tokenize_ids(&self, piece: &str, ids: &mut Vec<u32>) {
        let n_chars = if piece.is_ascii() { piece.len() } else { piece.chars().count() };
        let mut sink = Ids(ids);
        IDS_SCRATCH.with(|s| match s.try_borrow_mut() {
            Ok(mut s) => {
                let (scratch, subs) = &mut *s;
                word_cache::with_cache(self.cache_id, |c| {
                    self.lookup(scratch.pad(piece), n_chars, Hint::Nothing, c, subs, &mut sink)
                })
            }
            Err(_) => {
                let mut scratch = Scratch::default();
                self.lookup(scratch.pad(piece), n_chars, Hint::Nothing, None, &mut Vec::new(), &mut sink)
            }
        })
    }

    /// [`WordPiece::lookup`] as [`crate::models::Model::tokenize`] gives it: tokens with byte
    /// ranges, appended to `out`.
    pub fn tokenize(&self, piece: &str, out: &mut Vec<Token>) {
        let n_chars = piece.chars().count();
        let mut scratch = Scratch::default();
        let mut subs = Vec::new();
        let mut sink = CharTokens { out: Vec::new(), unk: false, n_chars };
        self.lookup(scratch.pad(piece), n_chars, Hint::Nothing, None, &mut subs, &mut sink);
        if n_chars == piece.len() {
            let t = |s: &SubToken| Token {
                id: s.id,
                start: s.char_start as u32,
                end: s.char_end as u32,
                unk: sink.unk,
            };
            out.extend(sink.out.iter().map(t));
            return;
        }
        // Char ranges to byte ranges, in one walk (ranges are in order and adjacent).
        let mut bytes =
            piece.char_indices().map(|(b, _)| b as u32).chain(std::iter::once(piece.len() as u32));
        let mut at = 0; // chars consumed from `bytes`
        let mut byte = 0;
        let mut to_byte = |c: usize| {
            while at <= c {
                byte = bytes.next().expect("a char index within the piece");
                at += 1;
            }
            byte
        };
        for s in &sink.out {
            let start = to_byte(s.char_start);
            let end = to_byte(s.char_end);
            out.push(Token { id: s.id, start, end, unk: sink.unk });
        }
    }

    /// [`WordPiece::token_text`] of a token with a byte range.
    pub fn token_text_bytes(&self, piece: &str, t: &Token) -> Arc<str> {
        if t.unk {
            return self.unk_token.clone();
        }
        if self.ids_name_tokens {
            return self.vocab_r[t.id as usize].clone();
        }
        let text = &piece[t.start as usize..t.end as usize];
        if t.start > 0 {
            Arc::from(format!("{}{text}", self.continuing_subword_prefix))
        } else {
            Arc::from(text)
        }
    }
}

/// The ids alone, for [`WordPiece::tokenize_ids`].
#[cfg(all(feature = "general", not(target_arch = "wasm32")))]
struct Ids<'a>(&'a mut Vec<u32>);

#[cfg(all(feature = "general", not(target_arch = "wasm32")))]
impl Sink for Ids<'_> {
    fn whole(&mut self, id: u32) {
        self.0.push(id);
    }

    fn unk(&mut self, unk_id: u32) {
        self.0.push(unk_id);
    }

    fn pieces(&mut self, pieces: &[SubToken]) {
        self.0.extend(pieces.iter().map(|s| s.id));
    }
}

#[cfg(all(feature = "general", not(target_arch = "wasm32")))]
thread_local! {
    /// [`WordPiece::tokenize_ids`]'s buffers, kept between words.
    static IDS_SCRATCH: std::cell::RefCell<(Scratch, Vec<SubToken>)> = Default::default();
}

/// A word's sub-tokens with char ranges, collected from [`WordPiece::lookup`].
struct CharTokens {
    out: Vec<SubToken>,
    unk: bool,
    n_chars: usize,
}

impl Sink for CharTokens {
    fn whole(&mut self, id: u32) {
        self.out.push(SubToken { id, char_start: 0, char_end: self.n_chars });
    }

    fn unk(&mut self, unk_id: u32) {
        self.unk = true;
        self.whole(unk_id);
    }

    fn pieces(&mut self, pieces: &[SubToken]) {
        self.out.extend_from_slice(pieces);
    }
}

/// Where the word `padded[..len]` (whole UTF-8 chars) sits in `one_char`, when it is one
/// char that the table covers. `padded` holds at least one byte; no padding is read past
/// `len`.
#[inline(always)]
fn one_char_index(padded: &[u8], len: usize) -> Option<usize> {
    let b0 = padded[0];
    if len == 1 {
        // A one-byte word of whole chars is one ASCII char.
        Some(b0 as usize)
    } else if len == 2 && b0.wrapping_sub(0xC2) < 0x1E {
        // A 2-byte lead byte: the word is that one char (else it is two ASCII chars).
        Some(((b0 as usize & 0x1F) << 6) | (padded[1] as usize & 0x3F))
    } else if len == 3 && b0.wrapping_sub(0xE4) < 6 {
        // A 3-byte lead byte starts a char of 3 bytes: the word is that one char.
        let cp = (b0 as u32 & 0x0F) << 12 | (padded[1] as u32 & 0x3F) << 6 | (padded[2] as u32 & 0x3F);
        Some(0x800 + (cp - ONE_CHAR_CJK) as usize)
    } else {
        None
    }
}

/// Sorts `(key, id)` pairs by key bytes. Each key's first 8 bytes, big-endian and zero-padded,
/// order like the key itself up to ties, and settle most comparisons without a call to
/// memcmp (a third of loading bert-base-uncased's vocabulary went to comparisons).
fn sort_by_key_bytes(entries: &mut [(&[u8], u32)]) {
    let head = |k: &[u8]| {
        let mut b = [0u8; 8];
        let n = k.len().min(8);
        b[..n].copy_from_slice(&k[..n]);
        u64::from_be_bytes(b)
    };
    let mut keyed: Vec<(u64, usize)> = entries.iter().enumerate().map(|(i, (k, _))| (head(k), i)).collect();
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| entries[a.1].0.cmp(entries[b.1].0)));
    let sorted: Vec<(&[u8], u32)> = keyed.iter().map(|&(_, i)| entries[i]).collect();
    entries.copy_from_slice(&sorted);
}

#[cfg(test)]
mod tests {
    #[test]
    fn key_bytes_sort_as_plain_sort() {
        let mut r = crate::testing::Rng(0x243F_6A88_85A3_08D3);
        // Short alphabets and NULs: equal heads, keys that are prefixes of others, padding.
        let alphabet = [0u8, 1, b'#', b'a', b'b', 0x7f, 0x80, 0xff];
        for round in 0..300 {
            let keys: Vec<Vec<u8>> = (0..r.below(200))
                .map(|_| {
                    (0..r.below(if round % 2 == 0 { 12 } else { 20 })).map(|_| r.pick(&alphabet)).collect()
                })
                .collect();
            let mut ours: Vec<(&[u8], u32)> =
                keys.iter().enumerate().map(|(i, k)| (k.as_slice(), i as u32)).collect();
            let mut plain = ours.clone();
            sort_by_key_bytes(&mut ours);
            plain.sort_by_key(|&(k, _)| k);
            let keys_of = |v: &[(&[u8], u32)]| v.iter().map(|&(k, _)| k.to_vec()).collect::<Vec<_>>();
            assert_eq!(keys_of(&ours), keys_of(&plain), "round {round}");
        }
    }

    use super::*;

    /// The reference's algorithm, written as plainly as possible.
    fn naive(
        vocab: &HashMap<String, u32>,
        word: &str,
        max_chars: usize,
        unk: u32,
    ) -> Vec<(u32, usize, usize)> {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > max_chars {
            return vec![(unk, 0, chars.len())];
        }
        let mut out = Vec::new();
        let mut start = 0;
        while start < chars.len() {
            let mut end = chars.len();
            let mut hit = None;
            while end > start {
                let piece: String = chars[start..end].iter().collect();
                let key = if start > 0 { format!("##{piece}") } else { piece };
                if let Some(&id) = vocab.get(&key) {
                    hit = Some(id);
                    break;
                }
                end -= 1;
            }
            match hit {
                Some(id) => out.push((id, start, end)),
                None => return vec![(unk, 0, chars.len())],
            }
            start = end;
        }
        out
    }

    #[test]
    fn one_char_words_read_from_the_table_equal_the_vocabulary() {
        // Every other char of the table's ranges and of their edges (U+3FFF and U+A000 are
        // 3-byte chars outside it) is an entry.
        let edges = (0x00u32..0x800).chain(0x3F00..0x4100).chain(0x9F00..0xA100).chain([0x1F600, 0x10FFFF]);
        let chars: Vec<char> = edges.filter_map(char::from_u32).collect();
        let mut vocab: HashMap<String, u32> = HashMap::new();
        vocab.insert("[UNK]".into(), 0);
        for (k, c) in chars.iter().enumerate() {
            if k % 2 == 0 {
                vocab.insert(c.to_string(), 1000 + k as u32);
            }
        }
        vocab.insert("ab".into(), 1);
        for max_chars in [100, 2, 1] {
            let wp = WordPiece::new(vocab.clone(), "[UNK]", "##", max_chars).unwrap();
            for word in chars.iter().map(|c| c.to_string()).chain(["ab".into(), "a".into(), "ac".into()]) {
                let mut padded = word.as_bytes().to_vec();
                padded.extend_from_slice(&[0xFF; SHORT]);
                let pw = PaddedWord::new(&padded, 0, word.len());
                let want = vocab.get(&word).copied().filter(|_| word.len() <= max_chars);
                if word.is_ascii() {
                    assert_eq!(wp.whole_ascii_word(pw), want, "ASCII {word:?} (max {max_chars})");
                }
                // A char the table says is absent is one unk token, as the plain algorithm
                // makes it; every other word is left to the piece-by-piece match.
                let n = word.chars().count();
                let plain = naive(&vocab, &word, max_chars, 0);
                match wp.whole_word(pw) {
                    Some(Found::Unk) => {
                        assert!(want.is_none(), "{word:?}");
                        assert_eq!(plain, vec![(0, 0, 1)], "{word:?} (max {max_chars})");
                    }
                    got => {
                        assert_eq!(got, want.map(Found::Whole), "{word:?} (max {max_chars})");
                        if n == 1 && want.is_none() && !vocab.contains_key(&word) && max_chars >= 1 {
                            // Only chars outside the table's ranges are not answered.
                            assert!(one_char_index(&padded, word.len()).is_none(), "{word:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn matches_the_plain_greedy_algorithm() {
        let alphabet: Vec<char> = "abcdeéß東😀".chars().collect();
        let mut rng = 0x1234_5678_9ABC_DEF0u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let word = |n: usize, next: &mut dyn FnMut() -> u64| -> String {
            (0..n).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect()
        };
        let mut vocab = HashMap::new();
        vocab.insert("[UNK]".to_string(), 0);
        // Pieces of every length, including beyond the 16-byte short keys.
        for i in 0..4000u32 {
            let len = 1 + (next() % 9) as usize;
            let w = word(len, &mut next);
            let key = if i % 2 == 0 { w } else { format!("##{w}") };
            let id = vocab.len() as u32;
            vocab.entry(key).or_insert(id);
        }
        let wp = WordPiece::new(vocab.clone(), "[UNK]", "##", 12).unwrap();
        let mut scratch = Scratch::default();
        for _ in 0..20000 {
            let len = (next() % 15) as usize;
            let w = word(len, &mut next);
            let n = w.chars().count();
            let want = naive(&vocab, &w, 12, 0);
            assert_eq!(flat(&wp, scratch.pad(&w), n, Hint::Nothing, None), want, "{w:?}");
            if !w.is_empty() {
                // The byte ranges of `tokenize` are the same chars' bytes.
                let mut toks = Vec::new();
                wp.tokenize(&w, &mut toks);
                let cuts: Vec<usize> = w.char_indices().map(|(b, _)| b).chain([w.len()]).collect();
                let bytes: Vec<(u32, usize, usize)> =
                    want.iter().map(|&(id, s, e)| (id, cuts[s], cuts[e])).collect();
                let got: Vec<(u32, usize, usize)> =
                    toks.iter().map(|t| (t.id, t.start as usize, t.end as usize)).collect();
                assert_eq!(got, bytes, "{w:?} byte ranges");
                assert!(toks.iter().all(|t| t.unk == (want[0].0 == 0)), "{w:?} unk flag");
                // The ids alone: a miss, then a hit of the word cache.
                #[cfg(all(feature = "general", not(target_arch = "wasm32")))]
                for _ in 0..2 {
                    let mut ids = vec![7];
                    wp.tokenize_ids(&w, &mut ids);
                    assert_eq!(ids[1..], want.iter().map(|t| t.0).collect::<Vec<_>>(), "{w:?} ids");
                }
            }
            // Every hint that holds for the word, without and through the word cache
            // (twice: a miss, then a hit), and padding of any value.
            let mut padded = w.as_bytes().to_vec();
            padded.extend_from_slice(&[0xAA; SHORT]);
            let pw = PaddedWord::new(&padded, 0, w.len());
            for hint in [Hint::Nothing, Hint::NotWhole, Hint::Ascii] {
                // Ascii is given for the words a pre-tokenizer makes: never empty.
                if hint == Hint::Ascii && (w.is_empty() || !w.is_ascii()) {
                    continue;
                }
                assert_eq!(flat(&wp, pw, n, hint, None), want, "{w:?} {hint:?}");
                for _ in 0..2 {
                    let got = word_cache::with_cache(wp.cache_id, |c| flat(&wp, pw, n, hint, c));
                    assert_eq!(got, want, "{w:?} {hint:?} cached");
                }
            }
        }
    }

    /// The tokens `lookup` gives `word`, as (id, char_start, char_end).
    fn flat(
        wp: &WordPiece,
        word: PaddedWord,
        n_chars: usize,
        hint: Hint,
        cache: Option<&mut WordCache>,
    ) -> Vec<(u32, usize, usize)> {
        struct Out {
            n_chars: usize,
            unk_id: u32,
            calls: usize,
            got: Vec<(u32, usize, usize)>,
        }
        impl Sink for Out {
            fn whole(&mut self, id: u32) {
                self.calls += 1;
                self.got.push((id, 0, self.n_chars));
            }
            fn unk(&mut self, unk_id: u32) {
                assert_eq!(unk_id, self.unk_id);
                self.calls += 1;
                self.got.push((unk_id, 0, self.n_chars));
            }
            fn pieces(&mut self, pieces: &[SubToken]) {
                self.calls += 1;
                self.got.extend(pieces.iter().map(|s| (s.id, s.char_start, s.char_end)));
            }
        }
        let mut out = Out { n_chars, unk_id: wp.unk_id, calls: 0, got: Vec::new() };
        wp.lookup(word, n_chars, hint, cache, &mut Vec::new(), &mut out);
        assert_eq!(out.calls, 1, "one sink call per word");
        out.got
    }
}
