//! The Python binding (`tokenprism._core`): a thin layer over the core, shaped like
//! Hugging Face `tokenizers`. No logic lives only here.

use crate::tokenizer::{self, Direction, Padding, PaddingStrategy, Truncation, TruncationStrategy};
use crate::Error;
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

/// Runs `f` without the GIL when the input is long enough for that to pay: releasing and
/// re-taking the GIL costs about as much as tokenizing a few dozen bytes, and short calls
/// are exactly where per-call overhead shows.
pub(crate) fn maybe_detach<T: Send>(py: Python<'_>, input_len: usize, f: impl FnOnce() -> T + Send) -> T {
    if input_len >= 2048 {
        py.detach(f)
    } else {
        f()
    }
}

thread_local! {
    /// The ids buffer of short `encode_ids` calls (inputs under 2 KB: its capacity stays small).
    static IDS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn to_py_err(e: Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Borrows a Python str as UTF-8, turning a lone surrogate into a clear ValueError
/// (a Python str may hold one; UTF-8 and therefore the tokenizer cannot).
fn text_of<'a>(s: &'a Bound<'_, PyAny>, what: &str) -> PyResult<std::borrow::Cow<'a, str>> {
    let s = s.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a str, not {}", s.get_type().name().map(|n| n.to_string()).unwrap_or_default()))
    })?;
    match s.to_str() {
        Ok(t) => Ok(std::borrow::Cow::Borrowed(t)),
        Err(e) => {
            let py = s.py();
            let pos = e.value(py).getattr("start").ok().and_then(|v| v.extract::<usize>().ok());
            Err(PyValueError::new_err(match pos {
                Some(p) => format!("{what} contains a lone surrogate at index {p}, which is not valid Unicode text and cannot be tokenized"),
                None => format!("{what} is not valid Unicode text (it contains a lone surrogate) and cannot be tokenized"),
            }))
        }
    }
}

/// The Python int of each id of a tokenizer, made the first time the id goes to Python and
/// shared after (as `BpeTokenizer` does): a fresh int per id is an allocation, and a free
/// when the list goes, where a made one is a reference count increment. One entry (16
/// bytes) per id of the vocabulary, added tokens included.
struct IntCache(Vec<std::sync::OnceLock<Py<PyAny>>>);

impl IntCache {
    fn for_tokenizer(t: &tokenizer::Tokenizer) -> std::sync::Arc<Self> {
        let n = t.model.vocab_r.len().max(t.added.iter().map(|a| a.id as usize + 1).max().unwrap_or(0));
        std::sync::Arc::new(IntCache((0..n).map(|_| std::sync::OnceLock::new()).collect()))
    }

    /// `ids` as a Python list.
    fn list<'py>(&self, py: Python<'py>, ids: impl ExactSizeIterator<Item = u32>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            ids.map(|id| match self.0.get(id as usize) {
                Some(cell) => cell.get_or_init(|| id.into_pyobject(py).expect("an int").into_any().unbind()).bind(py).clone(),
                None => id.into_pyobject(py).expect("an int").into_any(),
            }),
        )
    }
}

/// The result of an encode: ids, tokens, offsets and masks, one entry per token. Each
/// field's list is built from the compact core result when it is asked for.
#[pyclass(module = "tokenprism", name = "Encoding", frozen)]
pub struct PyEncoding {
    inner: tokenizer::Encoding,
    ints: std::sync::Arc<IntCache>,
}

#[pymethods]
impl PyEncoding {
    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.ints.list(py, self.inner.ids())
    }
    #[getter]
    fn type_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.inner.type_ids())
    }
    #[getter]
    fn tokens(&self) -> Vec<&str> {
        self.inner.tokens()
    }
    /// (start, end) in characters of the input string; (0, 0) for added special tokens.
    #[getter]
    fn offsets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.inner.offsets())
    }
    #[getter]
    fn attention_mask<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.inner.attention_mask())
    }
    #[getter]
    fn special_tokens_mask<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.inner.special_tokens_mask())
    }
    #[getter]
    fn word_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.inner.word_ids())
    }
    #[getter]
    fn sequence_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.inner.sequence_ids())
    }
    /// Deprecated alias of `word_ids` (as in the reference, with the same warning).
    #[getter]
    fn words<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let warning = py.get_type::<pyo3::exceptions::PyDeprecationWarning>();
        PyErr::warn(py, &warning, c"Deprecated in 0.9.4: Encoding.words is deprecated, please use Encoding.word_ids instead.", 1)?;
        self.word_ids(py)
    }
    /// How many inputs were encoded: 2 for a pair (even an empty one), else 1.
    #[getter]
    fn n_sequences(&self) -> usize {
        self.inner.n_sequences()
    }
    /// The input (0 or 1) of token `token_index`; None for special tokens and padding.
    fn token_to_sequence(&self, token_index: usize) -> Option<usize> {
        self.inner.token_to_sequence(token_index)
    }
    /// (start, end) in chars of its input of token `token_index`.
    fn token_to_chars(&self, token_index: usize) -> Option<(u32, u32)> {
        self.inner.token_to_chars(token_index)
    }
    /// The word (in its input) of token `token_index`.
    fn token_to_word(&self, token_index: usize) -> Option<u32> {
        self.inner.token_to_word(token_index)
    }
    /// The token that holds char `char_pos` of input `sequence_index`.
    #[pyo3(signature = (char_pos, sequence_index=0))]
    fn char_to_token(&self, char_pos: usize, sequence_index: usize) -> Option<usize> {
        self.inner.char_to_token(char_pos, sequence_index)
    }
    /// The word that holds char `char_pos` of input `sequence_index`.
    #[pyo3(signature = (char_pos, sequence_index=0))]
    fn char_to_word(&self, char_pos: usize, sequence_index: usize) -> Option<u32> {
        self.inner.char_to_word(char_pos, sequence_index)
    }
    /// The tokens (first, last + 1) of word `word_index` of input `sequence_index`.
    #[pyo3(signature = (word_index, sequence_index=0))]
    fn word_to_tokens(&self, word_index: u32, sequence_index: usize) -> Option<(usize, usize)> {
        self.inner.word_to_tokens(word_index, sequence_index)
    }
    /// (start, end) in chars of word `word_index` of input `sequence_index`.
    #[pyo3(signature = (word_index, sequence_index=0))]
    fn word_to_chars(&self, word_index: u32, sequence_index: usize) -> Option<(u32, u32)> {
        self.inner.word_to_chars(word_index, sequence_index)
    }
    /// What truncation cut off: windows of the input (`stride` tokens repeated), each an
    /// Encoding post-processed and padded as this one (a pair's are combined as the
    /// reference combines them).
    #[getter]
    fn overflowing(&self) -> Vec<PyEncoding> {
        self.inner.overflowing().iter().map(|e| PyEncoding { inner: e.clone(), ints: self.ints.clone() }).collect()
    }
    fn __len__(&self) -> usize {
        self.inner.len()
    }
    fn __repr__(&self) -> String {
        // The reference's form.
        format!(
            "Encoding(num_tokens={}, attributes=[ids, type_ids, tokens, offsets, attention_mask, special_tokens_mask, overflowing])",
            self.inner.len()
        )
    }

    /// Rebuilds an Encoding from the fields pickling stores.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn _from_fields(
        ids: Vec<u32>,
        type_ids: Vec<u32>,
        tokens: Vec<String>,
        offsets: Vec<(u32, u32)>,
        word_ids: Vec<Option<u32>>,
        sequence_ids: Vec<Option<u32>>,
        special_tokens_mask: Vec<u32>,
        attention_mask: Vec<u32>,
        n_sequences: usize,
        overflowing: Vec<PyRef<'_, PyEncoding>>,
    ) -> PyResult<Self> {
        let overflowing = overflowing.iter().map(|e| e.inner.clone()).collect();
        let inner = tokenizer::Encoding::from_fields(
            &ids, &type_ids, &tokens, &offsets, &word_ids, &sequence_ids, &special_tokens_mask, &attention_mask, n_sequences, overflowing,
        )
        .map_err(to_py_err)?;
        Ok(PyEncoding { inner, ints: std::sync::Arc::new(IntCache(Vec::new())) })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let e = &me.inner;
        let fields = (
            me.ids(py)?,
            me.type_ids(py)?,
            me.tokens(),
            me.offsets(py)?,
            me.word_ids(py)?,
            me.sequence_ids(py)?,
            me.special_tokens_mask(py)?,
            me.attention_mask(py)?,
            e.n_sequences(),
            me.overflowing(),
        )
            .into_pyobject(py)?;
        Ok((slf.get_type().getattr("_from_fields")?, fields))
    }
}

/// A tokenizer's normalizer, for `tokenizer.normalizer.normalize_str(text)`.
#[pyclass(module = "tokenprism", name = "Normalizer", frozen)]
pub struct PyNormalizer {
    tokenizer: std::sync::Arc<tokenizer::Tokenizer>,
}

#[pymethods]
impl PyNormalizer {
    fn normalize_str(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<String> {
        let text = text_of(text, "text")?;
        let t = &self.tokenizer;
        Ok(maybe_detach(py, text.len(), || t.normalize_str(&text, None).into_owned()))
    }
}

/// A tokenizer loaded from a Hugging Face `tokenizer.json` or a BERT `vocab.txt`.
///
/// >>> tok = Tokenizer.from_file("tokenizer.json")
/// >>> tok.encode("Héllo, Wörld!").tokens
/// ['[CLS]', 'hello', ',', 'world', '!', '[SEP]']
#[pyclass(module = "tokenprism", name = "Tokenizer")]
pub struct PyTokenizer {
    /// Shared with the `normalizer` handles given out; changed copy-on-write.
    inner: std::sync::Arc<tokenizer::Tokenizer>,
    /// What it was loaded from, so that it pickles.
    source: crate::config::Source,
    /// The Python ints of the ids, shared with the Encodings given out.
    ints: std::sync::Arc<IntCache>,
}

impl PyTokenizer {
    fn new(inner: tokenizer::Tokenizer, source: crate::config::Source) -> Self {
        let ints = IntCache::for_tokenizer(&inner);
        PyTokenizer { inner: inner.into(), source, ints }
    }
}

/// Threads `encode_batch` uses; 0 means one per CPU.
static NUM_THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn batch_threads(arg: Option<usize>) -> usize {
    match arg.unwrap_or_else(|| NUM_THREADS.load(std::sync::atomic::Ordering::Relaxed)) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Sets how many threads `encode_batch` uses by default (0: one per CPU).
#[pyfunction]
fn set_num_threads(n: usize) {
    NUM_THREADS.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// How many threads `encode_batch` uses by default.
#[pyfunction]
fn get_num_threads() -> usize {
    batch_threads(None)
}

fn input_pair<'a>(item: &'a Bound<'_, PyAny>) -> PyResult<(std::borrow::Cow<'a, str>, Option<std::borrow::Cow<'a, str>>)> {
    if let Ok(t) = item.cast::<PyTuple>() {
        if t.len() != 2 {
            return Err(PyTypeError::new_err("a pair input must be a tuple (text, pair)"));
        }
        // SAFETY-free borrow juggling: the tuple items live as long as the tuple.
        let a = t.get_borrowed_item(0)?.to_owned();
        let b = t.get_borrowed_item(1)?.to_owned();
        let a: String = text_of(&a, "text")?.into_owned();
        let b: String = text_of(&b, "pair")?.into_owned();
        return Ok((std::borrow::Cow::Owned(a), Some(std::borrow::Cow::Owned(b))));
    }
    Ok((text_of(item, "text")?, None))
}

#[pymethods]
impl PyTokenizer {
    /// Loads a `tokenizer.json` (or, if the file is not JSON, a `vocab.txt` with BERT defaults).
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let bytes = std::fs::read(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        let text = String::from_utf8(bytes)
            .map_err(|e| PyValueError::new_err(format!("{}: not UTF-8 text ({e})", path.display())))?;
        let inner = py
            .detach(|| {
                // A .json name or JSON-looking text is parsed (and its errors reported) as a
                // tokenizer.json; anything else is a vocab.txt.
                let looks_json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"))
                    || text.trim_start().starts_with('{');
                if looks_json {
                    tokenizer::Tokenizer::from_json_str(&text).map(|t| (t, crate::config::Source::Json(text.as_str().into())))
                } else {
                    tokenizer::Tokenizer::from_vocab_txt(&text).map(|t| (t, crate::config::Source::VocabTxt(text.as_str().into())))
                }
            })
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
        Ok(PyTokenizer::new(inner.0, inner.1))
    }

    /// Loads a tokenizer from the text of a `tokenizer.json`.
    #[staticmethod]
    fn from_str(py: Python<'_>, json: &Bound<'_, PyAny>) -> PyResult<Self> {
        let json = text_of(json, "json")?;
        let inner = py.detach(|| tokenizer::Tokenizer::from_json_str(&json)).map_err(to_py_err)?;
        Ok(PyTokenizer::new(inner, crate::config::Source::Json((*json).into())))
    }

    /// A BERT tokenizer (lowercasing, BERT defaults) from the path of a `vocab.txt`.
    #[staticmethod]
    fn from_vocab(path: std::path::PathBuf) -> PyResult<Self> {
        let text = std::fs::read_to_string(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        let inner = tokenizer::Tokenizer::from_vocab_txt(&text)
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
        Ok(PyTokenizer::new(inner, crate::config::Source::VocabTxt(text.into())))
    }

    /// Rebuilds a tokenizer from the state string that pickling stores.
    #[staticmethod]
    fn _from_state(py: Python<'_>, state: &str) -> PyResult<Self> {
        let (inner, source) = py.detach(|| crate::config::from_state_json(state)).map_err(to_py_err)?;
        Ok(PyTokenizer::new(inner, source))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let state = {
            let me = slf.borrow();
            crate::config::state_json(&me.inner, &me.source)
        };
        Ok((slf.get_type().getattr("_from_state")?, (state,)))
    }

    /// Just the ids, without offsets, token texts or masks: the fastest way to get ids.
    #[pyo3(signature = (sequence, add_special_tokens=true))]
    fn encode_ids<'py>(&self, py: Python<'py>, sequence: &Bound<'py, PyAny>, add_special_tokens: bool) -> PyResult<Bound<'py, PyList>> {
        let a = text_of(sequence, "sequence")?;
        let t = &self.inner;
        if a.len() >= 2048 {
            let ids = maybe_detach(py, a.len(), || t.encode_ids(&a, add_special_tokens)).map_err(to_py_err)?;
            return self.ints.list(py, ids.into_iter());
        }
        // Short inputs: the ids go to a per-thread buffer and straight into the list, so a
        // call allocates nothing but the Python objects.
        IDS.with(|buf| {
            let mut own = Vec::new();
            let mut held = buf.try_borrow_mut().ok();
            let ids = held.as_deref_mut().unwrap_or(&mut own);
            t.encode_ids_into(&a, add_special_tokens, ids).map_err(to_py_err)?;
            self.ints.list(py, ids.iter().copied())
        })
    }

    #[pyo3(signature = (sequence, pair=None, add_special_tokens=true))]
    fn encode(
        &self,
        py: Python<'_>,
        sequence: &Bound<'_, PyAny>,
        pair: Option<&Bound<'_, PyAny>>,
        add_special_tokens: bool,
    ) -> PyResult<PyEncoding> {
        let a = text_of(sequence, "sequence")?;
        let b = pair.map(|p| text_of(p, "pair")).transpose()?;
        let t = &self.inner;
        let n = a.len() + b.as_ref().map_or(0, |b| b.len());
        let enc = maybe_detach(py, n, || t.encode(&a, b.as_deref(), add_special_tokens)).map_err(to_py_err)?;
        Ok(PyEncoding { inner: enc, ints: self.ints.clone() })
    }

    /// Encodes a list of inputs; each is a str or a (str, str) pair. Runs on several
    /// threads with the GIL released (`num_threads`, default `get_num_threads()`).
    #[pyo3(signature = (inputs, add_special_tokens=true, num_threads=None))]
    fn encode_batch(&self, py: Python<'_>, inputs: &Bound<'_, PyList>, add_special_tokens: bool, num_threads: Option<usize>) -> PyResult<Vec<PyEncoding>> {
        let items: Vec<Bound<'_, PyAny>> = inputs.iter().collect();
        let mut owned = Vec::with_capacity(items.len());
        for it in &items {
            let (a, b) = input_pair(it)?;
            owned.push((a.into_owned(), b.map(|b| b.into_owned())));
        }
        let t = &self.inner;
        let encs = py
            .detach(|| {
                let refs: Vec<(&str, Option<&str>)> = owned.iter().map(|(a, b)| (a.as_str(), b.as_deref())).collect();
                t.encode_batch_threads(&refs, add_special_tokens, batch_threads(num_threads))
            })
            .map_err(to_py_err)?;
        Ok(encs.into_iter().map(|inner| PyEncoding { inner, ints: self.ints.clone() }).collect())
    }

    #[pyo3(signature = (ids, skip_special_tokens=true))]
    fn decode(&self, ids: Vec<u32>, skip_special_tokens: bool) -> String {
        self.inner.decode(&ids, skip_special_tokens)
    }

    #[pyo3(signature = (sequences, skip_special_tokens=true))]
    fn decode_batch(&self, sequences: Vec<Vec<u32>>, skip_special_tokens: bool) -> Vec<String> {
        sequences.iter().map(|ids| self.inner.decode(ids, skip_special_tokens)).collect()
    }

    fn no_truncation(&mut self) {
        std::sync::Arc::make_mut(&mut self.inner).truncation = None;
    }

    fn no_padding(&mut self) {
        std::sync::Arc::make_mut(&mut self.inner).padding = None;
    }

    #[pyo3(signature = (max_length, stride=0, strategy="longest_first", direction="right"))]
    fn enable_truncation(&mut self, max_length: usize, stride: usize, strategy: &str, direction: &str) -> PyResult<()> {
        let strategy = match strategy {
            "longest_first" => TruncationStrategy::LongestFirst,
            "only_first" => TruncationStrategy::OnlyFirst,
            "only_second" => TruncationStrategy::OnlySecond,
            s => return Err(PyValueError::new_err(format!("unknown truncation strategy {s:?}: use longest_first, only_first or only_second"))),
        };
        let t = Truncation::new(max_length, stride, strategy, parse_direction(direction)?).map_err(to_py_err)?;
        std::sync::Arc::make_mut(&mut self.inner).set_truncation(Some(t)).map_err(to_py_err)
    }

    #[pyo3(signature = (direction="right", pad_id=0, pad_type_id=0, pad_token="[PAD]", length=None, pad_to_multiple_of=None))]
    fn enable_padding(
        &mut self,
        direction: &str,
        pad_id: u32,
        pad_type_id: u32,
        pad_token: &str,
        length: Option<usize>,
        pad_to_multiple_of: Option<usize>,
    ) -> PyResult<()> {
        if length.is_some_and(|l| l > 1 << 24) {
            return Err(PyValueError::new_err("padding length must be at most 16777216"));
        }
        // Padding to a multiple of 2**40 would ask for terabytes (an abort, found by
        // tests/test_hostile.py); tokenizer.json files are held to the same limit.
        if pad_to_multiple_of.is_some_and(|m| m > 1 << 24) {
            return Err(PyValueError::new_err("pad_to_multiple_of must be at most 16777216"));
        }
        std::sync::Arc::make_mut(&mut self.inner).padding = Some(Padding {
            strategy: length.map_or(PaddingStrategy::BatchLongest, PaddingStrategy::Fixed),
            direction: parse_direction(direction)?,
            pad_to_multiple_of,
            pad_id,
            pad_type_id,
            pad_token: pad_token.into(),
        });
        Ok(())
    }

    /// The truncation settings as the reference reports them, or None.
    #[getter]
    fn truncation<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, pyo3::types::PyDict>>> {
        let Some(t) = &self.inner.truncation else { return Ok(None) };
        let d = pyo3::types::PyDict::new(py);
        d.set_item("max_length", t.max_length)?;
        d.set_item("stride", t.stride)?;
        d.set_item("strategy", match t.strategy {
            TruncationStrategy::LongestFirst => "longest_first",
            TruncationStrategy::OnlyFirst => "only_first",
            TruncationStrategy::OnlySecond => "only_second",
        })?;
        d.set_item("direction", direction_name(t.direction))?;
        Ok(Some(d))
    }

    /// The padding settings as the reference reports them, or None.
    #[getter]
    fn padding<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, pyo3::types::PyDict>>> {
        let Some(p) = &self.inner.padding else { return Ok(None) };
        let d = pyo3::types::PyDict::new(py);
        d.set_item("length", match p.strategy {
            PaddingStrategy::Fixed(n) => Some(n),
            PaddingStrategy::BatchLongest => None,
        })?;
        d.set_item("pad_to_multiple_of", p.pad_to_multiple_of)?;
        d.set_item("pad_id", p.pad_id)?;
        d.set_item("pad_token", &*p.pad_token)?;
        d.set_item("pad_type_id", p.pad_type_id)?;
        d.set_item("direction", direction_name(p.direction))?;
        Ok(Some(d))
    }

    #[getter]
    fn normalizer(&self) -> Option<PyNormalizer> {
        self.inner.normalizer.as_ref().map(|_| PyNormalizer { tokenizer: self.inner.clone() })
    }

    /// The fast paths as a dict of switches: simd, page_cache, lazy_output, fused.
    #[getter]
    fn fast_paths<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let d = pyo3::types::PyDict::new(py);
        let f = self.inner.fast;
        d.set_item("simd", f.simd)?;
        d.set_item("page_cache", f.page_cache)?;
        d.set_item("lazy_output", f.lazy_output)?;
        d.set_item("fused", f.fused)?;
        Ok(d)
    }

    /// Switches fast paths on or off (for benchmarks and demonstrations; results never change).
    #[pyo3(signature = (simd=None, page_cache=None, lazy_output=None, fused=None))]
    fn set_fast_paths(&mut self, simd: Option<bool>, page_cache: Option<bool>, lazy_output: Option<bool>, fused: Option<bool>) {
        let f = &mut std::sync::Arc::make_mut(&mut self.inner).fast;
        f.simd = simd.unwrap_or(f.simd);
        f.page_cache = page_cache.unwrap_or(f.page_cache);
        f.lazy_output = lazy_output.unwrap_or(f.lazy_output);
        f.fused = fused.unwrap_or(f.fused);
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id).map(str::to_owned)
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    #[pyo3(signature = (with_added_tokens=true))]
    fn get_vocab_size(&self, with_added_tokens: bool) -> usize {
        if with_added_tokens { self.inner.vocab_size() } else { self.inner.model.vocab.len() }
    }

    /// Every stage of one run on `text`, as a dict (the same shape the page gets from wasm).
    fn trace<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let text = text_of(text, "text")?;
        let t = &self.inner;
        let json = py.detach(|| serde_json::to_string(&t.trace(&text)).expect("a trace always serializes"));
        py.import("json")?.call_method1("loads", (json,))
    }
}

fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::Left => "left",
        Direction::Right => "right",
    }
}

fn parse_direction(d: &str) -> PyResult<Direction> {
    match d {
        "right" => Ok(Direction::Right),
        "left" => Ok(Direction::Left),
        _ => Err(PyValueError::new_err(format!("direction must be 'left' or 'right', not {d:?}"))),
    }
}

/// Unicode normalization (Unicode 15.0): `form` is "NFC", "NFD", "NFKC" or "NFKD".
///
/// >>> normalize("e\u0301", "NFC")
/// 'é'
#[pyfunction]
fn normalize(py: Python<'_>, text: &Bound<'_, PyAny>, form: &str) -> PyResult<String> {
    let form: crate::unicode::forms::Form = form.parse().map_err(|e: crate::unicode::forms::UnknownForm| PyValueError::new_err(e.to_string()))?;
    let text = text_of(text, "text")?;
    Ok(py.detach(|| crate::unicode::forms::normalize(&text, form)))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_class::<PyTokenizer>()?;
    m.add_class::<PyEncoding>()?;
    m.add_class::<PyNormalizer>()?;
    crate::bpe::python::register(m)?;
    crate::train::python::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
