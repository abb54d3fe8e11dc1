//! `Tokenizer`: a Hugging Face `tokenizer.json`, a BERT `vocab.txt` or a SentencePiece `.model`.

use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use super::array::{flat_arrays, ids_array};
use super::ids::{with_ids_buffer, IntCache};
use super::{maybe_detach, text_of, texts_of, to_py_err, DETACH_BYTES};
use crate::tokenizer::{self, Direction, Padding, PaddingStrategy, Truncation, TruncationStrategy};

use super::encoding::PyEncoding;
use super::normalizer::PyNormalizer;

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
    source: crate::loaders::tokenizer_json::Source,
    /// The Python ints of the ids, shared with the Encodings given out.
    ints: std::sync::Arc<IntCache>,
}

impl PyTokenizer {
    fn new(inner: tokenizer::Tokenizer, source: crate::loaders::tokenizer_json::Source) -> Self {
        let ints = IntCache::for_tokenizer(&inner);
        PyTokenizer { inner: inner.into(), source, ints }
    }

    fn sentencepiece(py: Python<'_>, data: Vec<u8>) -> Result<Self, crate::Error> {
        let inner = py.detach(|| crate::loaders::sentencepiece::tokenizer_from_model(&data))?;
        Ok(PyTokenizer::new(inner, crate::loaders::tokenizer_json::Source::SentencePiece(data.into())))
    }
}

/// Threads the batch calls use; 0 means one per CPU.
static NUM_THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub(crate) fn batch_threads(arg: Option<usize>) -> usize {
    match arg.unwrap_or_else(|| NUM_THREADS.load(std::sync::atomic::Ordering::Relaxed)) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Sets how many threads the batch calls use by default (0: one per CPU).
#[pyfunction]
pub(crate) fn set_num_threads(n: usize) {
    NUM_THREADS.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// How many threads the batch calls use by default.
#[pyfunction]
pub(crate) fn get_num_threads() -> usize {
    batch_threads(None)
}

fn input_pair<'a>(
    item: &'a Bound<'_, PyAny>,
) -> PyResult<(std::borrow::Cow<'a, str>, Option<std::borrow::Cow<'a, str>>)> {
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

/// A path's file name without its extension.
pub(crate) fn file_stem(path: &std::path::Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

#[pymethods]
impl PyTokenizer {
    /// Loads a tokenizer file, told by its name and contents: a SentencePiece `.model`, a
    /// `.tiktoken` rank file (of the encoding `name`, else the file's stem: `cl100k_base.tiktoken`,
    /// `o200k.tiktoken` ...), a `tokenizer.json` or Mistral `tekken.json`, or else a `vocab.txt`
    /// with BERT defaults.
    #[staticmethod]
    #[pyo3(signature = (path, name=None))]
    fn from_file(py: Python<'_>, path: std::path::PathBuf, name: Option<&str>) -> PyResult<Self> {
        let bytes =
            std::fs::read(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        #[cfg(feature = "general")]
        if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("tiktoken")) {
            let name = name.map(str::to_owned).unwrap_or_else(|| file_stem(&path));
            let inner = py
                .detach(|| crate::loaders::tiktoken::tokenizer(&name, &bytes))
                .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
            let source =
                crate::loaders::tokenizer_json::Source::Tiktoken { name: name.into(), data: bytes.into() };
            return Ok(PyTokenizer::new(inner, source));
        }
        let named_model = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("model"));
        if named_model || crate::loaders::sentencepiece::looks_like_model(&bytes) {
            return Self::sentencepiece(py, bytes)
                .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())));
        }
        let _ = name;
        let text = String::from_utf8(bytes)
            .map_err(|e| PyValueError::new_err(format!("{}: not UTF-8 text ({e})", path.display())))?;
        let inner = py
            .detach(|| {
                // A .json name or JSON-looking text is parsed (and its errors reported) as a
                // tokenizer.json; anything else is a vocab.txt.
                let looks_json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"))
                    || text.trim_start().starts_with('{');
                if looks_json {
                    tokenizer::Tokenizer::from_json_str(&text)
                        .map(|t| (t, crate::loaders::tokenizer_json::Source::Json(text.as_str().into())))
                } else {
                    tokenizer::Tokenizer::from_vocab_txt(&text)
                        .map(|t| (t, crate::loaders::tokenizer_json::Source::VocabTxt(text.as_str().into())))
                }
            })
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
        Ok(PyTokenizer::new(inner.0, inner.1))
    }

    /// A SentencePiece `.model` file: the ids, pieces and decoding of `sentencepiece`'s
    /// `SentencePieceProcessor` (Unigram and BPE models).
    #[staticmethod]
    fn from_sentencepiece_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let bytes =
            std::fs::read(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        Self::sentencepiece(py, bytes).map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))
    }

    /// A SentencePiece model from the bytes of its `.model` file.
    #[staticmethod]
    fn from_sentencepiece_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Self::sentencepiece(py, data.to_vec()).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Loads a tokenizer from the text of a `tokenizer.json`.
    #[staticmethod]
    fn from_str(py: Python<'_>, json: &Bound<'_, PyAny>) -> PyResult<Self> {
        let json = text_of(json, "json")?;
        let inner = py.detach(|| tokenizer::Tokenizer::from_json_str(&json)).map_err(to_py_err)?;
        Ok(PyTokenizer::new(inner, crate::loaders::tokenizer_json::Source::Json((*json).into())))
    }

    /// A BERT tokenizer (lowercasing, BERT defaults) from the path of a `vocab.txt`.
    #[staticmethod]
    fn from_vocab(path: std::path::PathBuf) -> PyResult<Self> {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        let inner = tokenizer::Tokenizer::from_vocab_txt(&text)
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
        Ok(PyTokenizer::new(inner, crate::loaders::tokenizer_json::Source::VocabTxt(text.into())))
    }

    /// Rebuilds a tokenizer from the state string that pickling stores.
    #[staticmethod]
    fn _from_state(py: Python<'_>, state: &str) -> PyResult<Self> {
        let (inner, source) =
            py.detach(|| crate::loaders::tokenizer_json::from_state_json(state)).map_err(to_py_err)?;
        Ok(PyTokenizer::new(inner, source))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let state = {
            let me = slf.borrow();
            crate::loaders::tokenizer_json::state_json(&me.inner, &me.source)
        };
        Ok((slf.get_type().getattr("_from_state")?, (state,)))
    }

    /// Just the ids, without offsets, token texts or masks: the fastest way to get ids. As a
    /// list, or with `as_array` a numpy uint32 array (faster still: no Python int per id).
    #[pyo3(signature = (sequence, add_special_tokens=true, *, as_array=false))]
    fn encode_ids<'py>(
        &self,
        py: Python<'py>,
        sequence: &Bound<'py, PyAny>,
        add_special_tokens: bool,
        as_array: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = text_of(sequence, "sequence")?;
        let t = &self.inner;
        if as_array || a.len() >= DETACH_BYTES {
            let ids =
                maybe_detach(py, a.len(), || t.encode_ids(&a, add_special_tokens)).map_err(to_py_err)?;
            return match as_array {
                true => ids_array(py, ids),
                false => Ok(self.ints.list(py, &ids)?.into_any()),
            };
        }
        // Short inputs: the ids go to a per-thread buffer and straight into the list, so a
        // call allocates nothing but the Python objects.
        with_ids_buffer(|ids| {
            t.encode_ids_into(&a, add_special_tokens, ids).map_err(to_py_err)?;
            Ok(self.ints.list(py, ids)?.into_any())
        })
    }

    /// `encode_ids` of each text, on several threads with the GIL released (`num_threads`,
    /// default `get_num_threads()`): a list of lists, or with `as_array` the numpy arrays
    /// `(ids, offsets)`, uint32 ids end to end and int64 offsets, text `i` being
    /// `ids[offsets[i]:offsets[i + 1]]`.
    #[pyo3(signature = (inputs, add_special_tokens=true, num_threads=None, *, as_array=false))]
    fn encode_batch_ids<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyList>,
        add_special_tokens: bool,
        num_threads: Option<usize>,
        as_array: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let items: Vec<Bound<'py, PyAny>> = inputs.iter().collect();
        let texts = texts_of(&items)?;
        let t = &self.inner;
        let flat = py
            .detach(|| {
                let refs: Vec<&str> = texts.iter().map(|s| &**s).collect();
                t.encode_batch_ids(&refs, add_special_tokens, batch_threads(num_threads))
            })
            .map_err(to_py_err)?;
        if as_array {
            return Ok(flat_arrays(py, flat)?.into_any());
        }
        let lists = flat.iter().map(|ids| self.ints.list(py, ids)).collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, lists)?.into_any())
    }

    /// The corpus commands' reader of a block of whole lines (`bytes`): documents as `docs`
    /// says ("line", "blank-line"), or with `field` each non-blank line's JSON string `field`;
    /// their ids (each followed by `eos` when given) on `num_threads` threads with the GIL
    /// released. Returns `(ids, offsets, bytes, chars, words)` (words only when `words`, else
    /// 0), or None when the block is not UTF-8 or a line lacks the field: the caller reads it
    /// line by line.
    #[pyo3(signature = (block, docs, field, add_special_tokens, eos, words, num_threads))]
    #[allow(clippy::too_many_arguments)]
    fn _encode_lines<'py>(
        &self,
        py: Python<'py>,
        block: &Bound<'py, PyBytes>,
        docs: &str,
        field: Option<&str>,
        add_special_tokens: bool,
        eos: Option<u32>,
        words: bool,
        num_threads: Option<usize>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let docs = tokenizer::documents::Documents::parse(docs)
            .ok_or_else(|| PyValueError::new_err(format!("unknown document mode {docs:?}")))?;
        let data = block.as_bytes();
        let t = &self.inner;
        let got = py
            .detach(|| -> crate::error::Result<_> {
                let Ok(text) = std::str::from_utf8(data) else { return Ok(None) };
                let Some(docs) = tokenizer::documents::line_documents(text, docs, field) else {
                    return Ok(None);
                };
                let refs: Vec<&str> = docs.iter().map(|d| &**d).collect();
                let counts = tokenizer::documents::TextCounts::of(refs.iter().copied(), words);
                let flat = t.encode_documents(&refs, add_special_tokens, eos, batch_threads(num_threads))?;
                Ok(Some((flat, counts)))
            })
            .map_err(to_py_err)?;
        let Some((flat, c)) = got else { return Ok(None) };
        let (ids, offsets) = flat_arrays(py, flat)?.extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()?;
        Ok(Some(PyTuple::new(
            py,
            [
                ids,
                offsets,
                c.bytes.into_pyobject(py)?.into_any(),
                c.chars.into_pyobject(py)?.into_any(),
                c.words.into_pyobject(py)?.into_any(),
            ],
        )?))
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
        let enc =
            maybe_detach(py, n, || t.encode(&a, b.as_deref(), add_special_tokens)).map_err(to_py_err)?;
        Ok(PyEncoding { inner: enc, ints: self.ints.clone() })
    }

    /// Encodes a list of inputs; each is a str or a (str, str) pair. Runs on several
    /// threads with the GIL released (`num_threads`, default `get_num_threads()`).
    #[pyo3(signature = (inputs, add_special_tokens=true, num_threads=None))]
    fn encode_batch(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyList>,
        add_special_tokens: bool,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<PyEncoding>> {
        let items: Vec<Bound<'_, PyAny>> = inputs.iter().collect();
        let mut owned = Vec::with_capacity(items.len());
        for it in &items {
            let (a, b) = input_pair(it)?;
            owned.push((a.into_owned(), b.map(|b| b.into_owned())));
        }
        let t = &self.inner;
        let encs = py
            .detach(|| {
                let refs: Vec<(&str, Option<&str>)> =
                    owned.iter().map(|(a, b)| (a.as_str(), b.as_deref())).collect();
                t.encode_batch_threads(&refs, add_special_tokens, batch_threads(num_threads))
            })
            .map_err(to_py_err)?;
        Ok(encs.into_iter().map(|inner| PyEncoding { inner, ints: self.ints.clone() }).collect())
    }

    #[pyo3(signature = (ids, skip_special_tokens=true))]
    fn decode(&self, ids: Vec<u32>, skip_special_tokens: bool) -> PyResult<String> {
        self.inner.decode(&ids, skip_special_tokens).map_err(to_py_err)
    }

    #[pyo3(signature = (sequences, skip_special_tokens=true))]
    fn decode_batch(&self, sequences: Vec<Vec<u32>>, skip_special_tokens: bool) -> PyResult<Vec<String>> {
        sequences.iter().map(|ids| self.inner.decode(ids, skip_special_tokens).map_err(to_py_err)).collect()
    }

    fn no_truncation(&mut self) {
        std::sync::Arc::make_mut(&mut self.inner).truncation = None;
    }

    fn no_padding(&mut self) {
        std::sync::Arc::make_mut(&mut self.inner).padding = None;
    }

    #[pyo3(signature = (max_length, stride=0, strategy="longest_first", direction="right"))]
    fn enable_truncation(
        &mut self,
        max_length: usize,
        stride: usize,
        strategy: &str,
        direction: &str,
    ) -> PyResult<()> {
        let strategy = match strategy {
            "longest_first" => TruncationStrategy::LongestFirst,
            "only_first" => TruncationStrategy::OnlyFirst,
            "only_second" => TruncationStrategy::OnlySecond,
            s => {
                return Err(PyValueError::new_err(format!(
                    "unknown truncation strategy {s:?}: use longest_first, only_first or only_second"
                )))
            }
        };
        let t =
            Truncation::new(max_length, stride, strategy, parse_direction(direction)?).map_err(to_py_err)?;
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
        // Padding to a multiple of 2**40 would ask for terabytes and abort (as
        // tests/core/test_hostile.py checks); tokenizer.json files are held to the same limit.
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
        d.set_item(
            "strategy",
            match t.strategy {
                TruncationStrategy::LongestFirst => "longest_first",
                TruncationStrategy::OnlyFirst => "only_first",
                TruncationStrategy::OnlySecond => "only_second",
            },
        )?;
        d.set_item("direction", direction_name(t.direction))?;
        Ok(Some(d))
    }

    /// The padding settings as the reference reports them, or None.
    #[getter]
    fn padding<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, pyo3::types::PyDict>>> {
        let Some(p) = &self.inner.padding else { return Ok(None) };
        let d = pyo3::types::PyDict::new(py);
        d.set_item(
            "length",
            match p.strategy {
                PaddingStrategy::Fixed(n) => Some(n),
                PaddingStrategy::BatchLongest => None,
            },
        )?;
        d.set_item("pad_to_multiple_of", p.pad_to_multiple_of)?;
        d.set_item("pad_id", p.pad_id)?;
        d.set_item("pad_token", &*p.pad_token)?;
        d.set_item("pad_type_id", p.pad_type_id)?;
        d.set_item("direction", direction_name(p.direction))?;
        Ok(Some(d))
    }

    #[getter]
    fn normalizer(&self) -> Option<PyNormalizer> {
        self.inner.normalizer.as_ref().map(|_| PyNormalizer::of_tokenizer(self.inner.clone()))
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
    fn set_fast_paths(
        &mut self,
        simd: Option<bool>,
        page_cache: Option<bool>,
        lazy_output: Option<bool>,
        fused: Option<bool>,
    ) {
        let f = &mut std::sync::Arc::make_mut(&mut self.inner).fast;
        f.simd = simd.unwrap_or(f.simd);
        f.page_cache = page_cache.unwrap_or(f.page_cache);
        f.lazy_output = lazy_output.unwrap_or(f.lazy_output);
        f.fused = fused.unwrap_or(f.fused);
    }

    /// The vocabulary entries whose text (the id decoded alone) does not encode back to that
    /// one id: (id, token, text, the text's ids), in id order.
    #[allow(clippy::type_complexity)] // the tuple is what Python receives
    fn round_trip_misses(&self) -> PyResult<Vec<(u32, String, String, Vec<u32>)>> {
        let misses = self.inner.round_trip_misses().map_err(to_py_err)?;
        Ok(misses.into_iter().map(|m| (m.id, m.token, m.text, m.ids)).collect())
    }

    /// The model's vocabulary ids (added tokens left out) that encoding each of `texts` (no
    /// special tokens added) never yields, in id order.
    fn never_produced(&self, py: Python<'_>, texts: Vec<String>) -> PyResult<Vec<u32>> {
        py.detach(|| self.inner.never_produced(texts.iter().map(String::as_str))).map_err(to_py_err)
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id).map(str::to_owned)
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    #[pyo3(signature = (with_added_tokens=true))]
    fn get_vocab_size(&self, with_added_tokens: bool) -> usize {
        if with_added_tokens {
            self.inner.vocab_size()
        } else {
            self.inner.model.vocab_size()
        }
    }

    /// The Unigram lattice of one pre-token as the model gets it (a dict, as
    /// `Unigram.lattice` gives it); other models raise ValueError.
    #[pyo3(signature = (piece, max_nodes = 1000))]
    fn lattice<'py>(
        &self,
        py: Python<'py>,
        piece: &Bound<'py, PyAny>,
        max_nodes: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let piece = text_of(piece, "piece")?;
        let lattice = self.inner.lattice(&piece, max_nodes).map_err(to_py_err)?;
        super::unigram::lattice_dict(py, &lattice)
    }

    /// How WordPiece searches one pre-token, as a dict: "attempts" (each substring looked up,
    /// longest first at each start, with "start", "end" in chars, "piece" and "id" or None),
    /// "chars", "unk", "too_long", "truncated", "unk_id", "unk_token"; the model's tokens are
    /// the matches, or the unk token when "unk". Other models raise ValueError.
    #[pyo3(signature = (piece, max_attempts = 10000))]
    fn wordpiece_steps<'py>(
        &self,
        py: Python<'py>,
        piece: &Bound<'py, PyAny>,
        max_attempts: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let piece = text_of(piece, "piece")?;
        let steps = self.inner.wordpiece_steps(&piece, max_attempts).map_err(to_py_err)?;
        json_value(py, &steps)
    }

    /// How BPE merges one pre-token, as a dict: "initial" (the symbols' ids), "steps" (each
    /// merge in order: "index", "left", "right", "rank", "merged", "parts" after it), "ids",
    /// "whole_token", and "tokens" (the texts of the initial symbols, then of each merged
    /// token); other models raise ValueError.
    fn merge_trace<'py>(&self, py: Python<'py>, piece: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let piece = text_of(piece, "piece")?;
        let trace = self.inner.merge_trace(&piece).map_err(to_py_err)?;
        let merged = trace.steps.iter().map(|s| s.merged);
        let names: Vec<&str> = trace
            .initial
            .iter()
            .copied()
            .chain(merged)
            .map(|id| self.inner.id_to_token(id).unwrap_or(""))
            .collect();
        let dict = json_value(py, &trace)?;
        dict.set_item("tokens", names)?;
        Ok(dict)
    }

    /// Every stage of one run on `text`, as a dict (the same shape the page gets from wasm).
    fn trace<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let text = text_of(text, "text")?;
        let t = &self.inner;
        let json = py
            .detach(|| {
                t.trace(&text).map(|tr| serde_json::to_string(&tr).expect("a trace always serializes"))
            })
            .map_err(to_py_err)?;
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

/// `value` as the Python object its JSON reads as (the shape the page gets from wasm).
fn json_value<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_string(value).expect("plain data always serializes");
    py.import("json")?.call_method1("loads", (json,))
}
