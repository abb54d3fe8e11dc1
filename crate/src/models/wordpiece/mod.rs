//! WordPiece: greedy longest match from the left, `##` on continuations; a word with any
//! unmatched position, or longer than `max_input_chars_per_word`, becomes one unk token.

pub mod trie;
pub mod vocab_index;
pub mod word_cache;

use crate::error::{Error, Result};
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

static NEXT_CACHE_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

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

/// Reused buffers: a padded copy of the word (for callers without padding).
#[derive(Default, Debug)]
pub struct Scratch {
    padded: Vec<u8>,
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
        let max_id = *vocab.values().max().unwrap() as usize;
        if max_id >= 1 << 24 && max_id > vocab.len() * 16 {
            return Err(Error::Invalid(format!(
                "vocabulary ids are implausibly sparse (largest id {max_id} for {} tokens)",
                vocab.len()
            )));
        }
        let empty: Arc<str> = Arc::from("");
        let mut vocab_r = vec![empty; max_id + 1];
        let mut seen = vec![false; max_id + 1];
        let mut ids_name_tokens = true;
        // Iterate in a fixed order so a repeated id resolves the same way every run.
        let mut sorted: Vec<(&String, &u32)> = vocab.iter().collect();
        sorted.sort();
        for (tok, &id) in sorted {
            if seen[id as usize] {
                ids_name_tokens = false;
            }
            seen[id as usize] = true;
            vocab_r[id as usize] = Arc::from(tok.as_str());
        }
        let initial_entries: Vec<(&[u8], u32)> = vocab.iter().map(|(k, &v)| (k.as_bytes(), v)).collect();
        let continuation_entries: Vec<(&[u8], u32)> = vocab
            .iter()
            .filter_map(|(k, &v)| k.strip_prefix(continuing_subword_prefix).map(|rest| (rest.as_bytes(), v)))
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
        let initial_trie = Trie::new(initial_entries.iter().copied());
        let continuation_trie = Trie::new(continuation_entries.iter().copied());
        Ok(WordPiece {
            unk_token: Arc::from(unk_token),
            vocab,
            vocab_r: Arc::new(vocab_r),
            ids_name_tokens,
            unk_id,
            continuing_subword_prefix: continuing_subword_prefix.to_owned(),
            max_input_chars_per_word,
            small,
            initial,
            initial_trie,
            continuation_trie,
            one_char,
            cache_id: NEXT_CACHE_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
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

    /// Tokenizes one word of `n_chars` chars, appending to `out`; returns true when the whole
    /// word became the unk token.
    pub fn tokenize_word(
        &self,
        word: &str,
        n_chars: usize,
        scratch: &mut Scratch,
        out: &mut Vec<SubToken>,
    ) -> bool {
        let mut padded = std::mem::take(&mut scratch.padded);
        padded.clear();
        padded.extend_from_slice(word.as_bytes());
        padded.extend_from_slice(&[0; SHORT]);
        let r = self.tokenize_padded(&padded, word.len(), n_chars, out);
        scratch.padded = padded;
        r
    }

    /// The id of the word `padded[..len]` when it is itself a vocabulary entry of at most 16
    /// bytes and not too long to tokenize: most words of most text, for one probe.
    #[inline(always)]
    pub fn whole_word(&self, padded: &[u8], len: usize) -> Option<u32> {
        if len <= 3 {
            // One char of the table: a direct read instead of a hash probe.
            if let Some(at) = one_char_index(padded, len) {
                let id = self.one_char[at];
                return (id < UNK_CHAR).then_some(id);
            }
        }
        self.whole_word_probe(padded, len)
    }

    /// [`WordPiece::whole_word`], or the unk id when the word is one char absent from the
    /// vocabulary (one unk token): for callers that need the ids only, or that name every
    /// token by its id (the unk token then reads as its id's text).
    #[inline(always)]
    pub fn whole_word_or_unk(&self, padded: &[u8], len: usize) -> Option<u32> {
        if len <= 3 {
            if let Some(at) = one_char_index(padded, len) {
                let id = self.one_char[at];
                return if id < UNK_CHAR {
                    Some(id)
                } else if id == UNK_CHAR {
                    Some(self.unk_id)
                } else {
                    None
                };
            }
        }
        self.whole_word_probe(padded, len)
    }

    /// [`WordPiece::whole_word`] for a word the one-char table does not answer.
    #[inline(always)]
    fn whole_word_probe(&self, padded: &[u8], len: usize) -> Option<u32> {
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

    /// [`WordPiece::whole_word`] for a word known to be all ASCII (English, code): a word of
    /// one byte (punctuation, mostly) from the one-char table, one of up to 8 bytes from one
    /// probe of the small index.
    #[inline(always)]
    pub fn whole_ascii_word(&self, padded: &[u8], len: usize) -> Option<u32> {
        debug_assert!(padded[..len].is_ascii());
        if len == 1 {
            // NO_ID and UNK_CHAR (absent from the vocabulary: the caller makes it the unk
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

    /// [`WordPiece::tokenize_word`] on the word `padded[..len]`; `padded` must hold at least
    /// 16 more bytes after the word (any values), so that keys load as whole words.
    #[inline]
    pub fn tokenize_padded(
        &self,
        padded: &[u8],
        len: usize,
        n_chars: usize,
        out: &mut Vec<SubToken>,
    ) -> bool {
        if n_chars > self.max_input_chars_per_word {
            out.push(SubToken { id: self.unk_id, char_start: 0, char_end: n_chars });
            return true;
        }
        if let Some(id) = self.whole_word(padded, len) {
            out.push(SubToken { id, char_start: 0, char_end: n_chars });
            return false;
        }
        self.tokenize_pieces(padded, len, n_chars, out)
    }

    /// [`WordPiece::tokenize_padded`] through `cache` (when there is one): a word seen
    /// before costs one lookup.
    #[inline]
    pub fn tokenize_cached(
        &self,
        cache: Option<&mut WordCache>,
        padded: &[u8],
        len: usize,
        n_chars: usize,
        out: &mut Vec<SubToken>,
    ) -> bool {
        // Without the cache, tokenize_padded asks whole_word itself.
        if cache.is_some() && self.cacheable(len, n_chars) {
            if let Some(id) = self.whole_word(padded, len) {
                out.push(SubToken { id, char_start: 0, char_end: n_chars });
                return false;
            }
        }
        self.tokenize_cached_not_whole(cache, padded, len, n_chars, out)
    }

    /// Whether a word of `len` bytes and `n_chars` chars goes through the word cache (short
    /// enough for its keys, and not the unk token by length).
    #[inline(always)]
    fn cacheable(&self, len: usize, n_chars: usize) -> bool {
        len <= word_cache::MAX_KEY && n_chars <= self.max_input_chars_per_word
    }

    /// [`WordPiece::tokenize_cached`] for a word that [`WordPiece::whole_word`] did not find
    /// (the caller asked already, so the probe is not repeated).
    #[inline]
    pub fn tokenize_cached_not_whole(
        &self,
        cache: Option<&mut WordCache>,
        padded: &[u8],
        len: usize,
        n_chars: usize,
        out: &mut Vec<SubToken>,
    ) -> bool {
        match cache {
            Some(c) if self.cacheable(len, n_chars) => self.cached_pieces(c, padded, len, n_chars, out),
            _ => self.tokenize_padded(padded, len, n_chars, out),
        }
    }

    /// Appends the ids of a word that [`WordPiece::whole_word`] did not find, through
    /// `cache`: a word seen before costs one lookup and one copy of its ids. `subs` is
    /// scratch space.
    #[inline]
    pub fn ids_not_whole(
        &self,
        cache: Option<&mut WordCache>,
        padded: &[u8],
        len: usize,
        n_chars: usize,
        subs: &mut Vec<SubToken>,
        ids: &mut Vec<u32>,
    ) {
        // (Asked here rather than with whole_word: in the caller's loop, the extra branch
        // cost English more than it saved.)
        if len <= 3 && one_char_index(padded, len).is_some_and(|at| self.one_char[at] == UNK_CHAR) {
            ids.push(self.unk_id);
            return;
        }
        subs.clear();
        match cache {
            Some(c) if self.cacheable(len, n_chars) => {
                let key = word_cache::Key::new(padded, len);
                if c.push_ids(&key, padded, ids) {
                    return;
                }
                let unk = self.tokenize_pieces(padded, len, n_chars, subs);
                c.insert(&key, padded, subs, unk);
            }
            _ => {
                self.tokenize_padded(padded, len, n_chars, subs);
            }
        }
        ids.extend(subs.iter().map(|s| s.id));
    }

    /// The cache lookup, and on a miss the piece-by-piece match recorded in the cache.
    #[inline(always)]
    fn cached_pieces(
        &self,
        cache: &mut WordCache,
        padded: &[u8],
        len: usize,
        n_chars: usize,
        out: &mut Vec<SubToken>,
    ) -> bool {
        let key = word_cache::Key::new(padded, len);
        if let Some((subs, unk)) = cache.get(&key, padded) {
            out.extend_from_slice(subs);
            return unk;
        }
        let mark = out.len();
        let unk = self.tokenize_pieces(padded, len, n_chars, out);
        cache.insert(&key, padded, &out[mark..], unk);
        unk
    }

    /// The piece-by-piece match of a word that is not itself a vocabulary entry.
    fn tokenize_pieces(&self, padded: &[u8], len: usize, n_chars: usize, out: &mut Vec<SubToken>) -> bool {
        let bytes = &padded[..len];
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
}

/// Where the word `padded[..len]` (whole UTF-8 chars) sits in `one_char`, when it is one
/// char that the table covers.
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

#[cfg(test)]
mod tests {
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
                let want = vocab.get(&word).copied().filter(|_| word.len() <= max_chars);
                assert_eq!(wp.whole_word(&padded, word.len()), want, "{word:?} (max {max_chars})");
                if word.is_ascii() {
                    assert_eq!(
                        wp.whole_ascii_word(&padded, word.len()),
                        want,
                        "ASCII {word:?} (max {max_chars})"
                    );
                }
                // A char the table says is absent is one unk token, as the plain algorithm
                // makes it; every other word is left to the piece-by-piece match.
                let n = word.chars().count();
                let plain = naive(&vocab, &word, max_chars, 0);
                let or_unk = wp.whole_word_or_unk(&padded, word.len());
                if or_unk != want {
                    assert!(want.is_none() && or_unk == Some(0), "{word:?}");
                    assert_eq!(plain, vec![(0, 0, 1)], "{word:?} (max {max_chars})");
                } else if n == 1 && want.is_none() && !vocab.contains_key(&word) && max_chars >= 1 {
                    // Only chars outside the table's ranges are not answered.
                    assert!(one_char_index(&padded, word.len()).is_none(), "{word:?}");
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
            let mut out = Vec::new();
            let unk0 = wp.tokenize_word(&w, n, &mut scratch, &mut out);
            let got: Vec<(u32, usize, usize)> =
                out.iter().map(|s| (s.id, s.char_start, s.char_end)).collect();
            assert_eq!(got, naive(&vocab, &w, 12, 0), "{w:?}");
            // The same through the word cache, twice (a miss, then a hit).
            for _ in 0..2 {
                let mut padded = w.as_bytes().to_vec();
                padded.extend_from_slice(&[0xAA; SHORT]);
                let mut cached = Vec::new();
                let unk = word_cache::with_cache(wp.cache_id, |c| {
                    wp.tokenize_cached(c, &padded, w.len(), n, &mut cached)
                });
                assert_eq!(cached, out, "{w:?}");
                assert_eq!(unk, unk0, "{w:?}");
            }
        }
    }
}
