//! Python class `tokenprism.BpeTokenizer`: a thin layer over
//! [`crate::tokenizer::bpe::BpeTokenizer`], shaped like `tiktoken.Encoding` (encode / encode_ordinary / decode / decode_bytes, `allowed_special` and
//! `disallowed_special`).

use std::collections::HashSet;
use std::path::PathBuf;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use super::array::{flat_arrays, ids_array};
use super::encoding::PyEncoding;
use super::ids::IntCache;
use super::tokenizer::batch_threads;
use super::{maybe_detach, text_of, texts_of, to_py_err};
use crate::tokenizer::bpe::{Allowed, BpeTokenizer, Pattern};
use crate::tokenizer::chat::{ChatTemplate, Message};
use crate::tokenizer::FlatIds;

/// `"all"`, or a collection of str (set, frozenset, list, tuple).
fn special_set(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Allowed> {
    if let Ok(s) = v.cast::<PyString>() {
        return match s.to_str()? {
            "all" => Ok(Allowed::All),
            other => Err(PyValueError::new_err(format!(
                "{what} must be \"all\" or a set of str, not the str {other:?}"
            ))),
        };
    }
    let mut set = HashSet::new();
    for item in
        v.try_iter().map_err(|_| PyTypeError::new_err(format!("{what} must be \"all\" or a set of str")))?
    {
        set.insert(item?.extract::<String>()?);
    }
    Ok(Allowed::Only(set))
}

/// tiktoken's `allowed_special` (default: none) and `disallowed_special` (default: "all").
fn specials(
    allowed_special: Option<&Bound<'_, PyAny>>,
    disallowed_special: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Allowed, Allowed)> {
    let allowed =
        allowed_special.map(|a| special_set(a, "allowed_special")).transpose()?.unwrap_or_else(Allowed::none);
    let disallowed =
        disallowed_special.map(|d| special_set(d, "disallowed_special")).transpose()?.unwrap_or(Allowed::All);
    Ok((allowed, disallowed))
}

/// What `encode_ordinary` allows and refuses: no special token either way.
fn ordinary() -> (Allowed, Allowed) {
    (Allowed::none(), Allowed::none())
}

/// A byte-level BPE tokenizer (GPT-2, cl100k_base, o200k_base, Qwen3, ...).
///
/// >>> enc = BpeTokenizer.from_tiktoken_file("o200k_base.tiktoken", "o200k_base")
/// >>> enc.encode("hello world")
/// [24912, 2375]
/// >>> enc.decode([24912, 2375])
/// 'hello world'
#[pyclass(module = "tokenprism", name = "BpeTokenizer", frozen)]
pub struct PyBpeTokenizer {
    inner: BpeTokenizer,
    /// The Python int of each id (see `IntCache`), shared with the Encodings given out.
    ints: std::sync::Arc<IntCache>,
}

impl PyBpeTokenizer {
    /// Wraps a tokenizer built elsewhere in the crate (the trainer's result).
    pub(crate) fn from_inner(inner: BpeTokenizer) -> Self {
        let ints = std::sync::Arc::new(IntCache::new(inner.n_vocab() as usize));
        PyBpeTokenizer { inner, ints }
    }

    /// `ids` as a Python list of ints, the ints shared across calls (see `ints`).
    fn id_list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        self.ints.list(py, ids)
    }

    /// The ids of `encode` (without the GIL for long texts).
    fn ids_of(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        (allowed, disallowed): (Allowed, Allowed),
        add_special_tokens: bool,
    ) -> PyResult<Vec<u32>> {
        let text = text_of(text, "text")?;
        let t = &self.inner;
        let ids = maybe_detach(py, text.len(), || t.encode_with_special(&text, &allowed, &disallowed))
            .map_err(to_py_err)?;
        if add_special_tokens {
            t.add_special_tokens(ids).map_err(to_py_err)
        } else {
            Ok(ids)
        }
    }

    /// The ids of `encode_batch`, end to end (on threads, without the GIL).
    fn flat_of(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyList>,
        num_threads: Option<usize>,
        (allowed, disallowed): (Allowed, Allowed),
        add_special_tokens: bool,
    ) -> PyResult<FlatIds> {
        let items: Vec<Bound<'_, PyAny>> = texts.iter().collect();
        let texts = texts_of(&items)?;
        let t = &self.inner;
        py.detach(|| {
            let refs: Vec<&str> = texts.iter().map(|s| &**s).collect();
            t.encode_batch_flat(&refs, &allowed, &disallowed, add_special_tokens, batch_threads(num_threads))
        })
        .map_err(to_py_err)
    }

    /// A batch's ids as a list of lists of the shared ints.
    fn id_lists<'py>(&self, py: Python<'py>, flat: &FlatIds) -> PyResult<Bound<'py, PyList>> {
        let lists = flat.iter().map(|ids| self.id_list(py, ids)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
    }
}

#[pymethods]
impl PyBpeTokenizer {
    /// Loads a `.tiktoken` rank file. `name` (gpt2, r50k_base, p50k_base, p50k_edit,
    /// cl100k_base, o200k_base, o200k_harmony) picks the pattern and special tokens, unless
    /// `pattern` ("gpt2", "cl100k", "o200k", "qwen", "llama3") and `special_tokens` are given.
    #[staticmethod]
    #[pyo3(signature = (path, name, pattern=None, special_tokens=None))]
    fn from_tiktoken_file(
        py: Python<'_>,
        path: PathBuf,
        name: &str,
        pattern: Option<&str>,
        special_tokens: Option<std::collections::HashMap<String, u32>>,
    ) -> PyResult<Self> {
        let data = std::fs::read(&path)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))?;
        Self::from_tiktoken_bytes(py, &data, name, pattern, special_tokens)
    }

    /// Like `from_tiktoken_file`, from the file's contents.
    #[staticmethod]
    #[pyo3(signature = (data, name, pattern=None, special_tokens=None))]
    fn from_tiktoken_bytes(
        py: Python<'_>,
        data: &[u8],
        name: &str,
        pattern: Option<&str>,
        special_tokens: Option<std::collections::HashMap<String, u32>>,
    ) -> PyResult<Self> {
        let known = crate::loaders::tiktoken::tiktoken_encoding(name);
        let pattern = match pattern {
            Some(p) => Pattern::parse(p).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown pattern {p:?}: expected gpt2, cl100k, o200k, qwen or llama3"
                ))
            })?,
            None => known.as_ref().map(|k| k.0).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown encoding {name:?}: pass pattern= and special_tokens= for a custom rank file"
                ))
            })?,
        };
        let mut specials: Vec<(String, u32)> = match special_tokens {
            Some(map) => map.into_iter().collect(),
            None => known.map(|k| k.1).unwrap_or_default(),
        };
        specials.sort_by_key(|s| s.1);
        let inner =
            py.detach(|| BpeTokenizer::from_tiktoken(name, data, pattern, &specials)).map_err(to_py_err)?;
        Ok(PyBpeTokenizer::from_inner(inner))
    }

    /// Loads a Hugging Face `tokenizer.json` with a byte-level BPE model.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let json = std::fs::read_to_string(&path)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))?;
        let name = path.display().to_string();
        let inner = py.detach(|| BpeTokenizer::from_hf_json(&json)).map_err(to_py_err)?.with_name(&name);
        Ok(PyBpeTokenizer::from_inner(inner))
    }

    /// Like `from_file`, from the JSON text.
    #[staticmethod]
    fn from_str(py: Python<'_>, json: &str) -> PyResult<Self> {
        let inner = py.detach(|| BpeTokenizer::from_hf_json(json)).map_err(to_py_err)?;
        Ok(PyBpeTokenizer::from_inner(inner))
    }

    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// The pre-tokenization pattern: "gpt2", "cl100k", "o200k", "qwen" or "llama3".
    #[getter]
    fn pattern(&self) -> &'static str {
        self.inner.pattern().name()
    }

    /// The regex the pattern reproduces.
    #[getter]
    fn pat_str(&self) -> &'static str {
        self.inner.pattern().regex()
    }

    /// "NFC" when text is normalized before pre-tokenization (Qwen), else None.
    #[getter]
    fn normalizer(&self) -> Option<&'static str> {
        self.inner.normalizes_nfc().then_some("NFC")
    }

    #[getter]
    fn n_vocab(&self) -> u32 {
        self.inner.n_vocab()
    }

    /// The special tokens (content -> id); not the non-special added tokens.
    #[getter]
    fn special_tokens(&self) -> std::collections::HashMap<String, u32> {
        self.inner
            .added_tokens()
            .iter()
            .filter(|t| t.special)
            .map(|t| (t.content.to_string(), t.id))
            .collect()
    }

    #[getter]
    fn special_tokens_set(&self) -> HashSet<String> {
        self.inner.added_tokens().iter().filter(|t| t.special).map(|t| t.content.to_string()).collect()
    }

    /// Encodes text; special tokens in `allowed_special` become their ids, those in
    /// `disallowed_special` ("all": every special token not allowed) raise ValueError, and
    /// any other is encoded as ordinary text. `add_special_tokens` puts the tokenizer.json
    /// post-processor's special tokens around the ids (Llama 3's `<|begin_of_text|>`).
    #[pyo3(signature = (text, *, allowed_special=None, disallowed_special=None, add_special_tokens=false))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'_, PyAny>,
        allowed_special: Option<&Bound<'_, PyAny>>,
        disallowed_special: Option<&Bound<'_, PyAny>>,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let specials = specials(allowed_special, disallowed_special)?;
        let ids = self.ids_of(py, text, specials, add_special_tokens)?;
        self.id_list(py, &ids)
    }

    /// `encode` as a numpy uint32 array (tiktoken's `encode_to_numpy`): the ids are not
    /// copied and no Python int is made.
    #[pyo3(signature = (text, *, allowed_special=None, disallowed_special=None, add_special_tokens=false))]
    fn encode_to_numpy<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'_, PyAny>,
        allowed_special: Option<&Bound<'_, PyAny>>,
        disallowed_special: Option<&Bound<'_, PyAny>>,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let specials = specials(allowed_special, disallowed_special)?;
        ids_array(py, self.ids_of(py, text, specials, add_special_tokens)?)
    }

    /// Encodes text (and `pair`) as `tokenizers`' `Tokenizer.encode` does, into an
    /// `Encoding`: ids, tokens, offsets (in chars), word ids, type ids and masks. Every
    /// added token in the text is recognized, special ones included; `add_special_tokens`
    /// applies the file's post-processor (template).
    ///
    /// >>> llama.encode_full("Hi").tokens
    /// ['<|begin_of_text|>', 'Hi']
    #[pyo3(signature = (text, pair=None, *, add_special_tokens=true))]
    fn encode_full(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        pair: Option<&Bound<'_, PyAny>>,
        add_special_tokens: bool,
    ) -> PyResult<PyEncoding> {
        let text = text_of(text, "text")?;
        let pair = pair.map(|p| text_of(p, "pair")).transpose()?;
        let t = &self.inner;
        let len = text.len() + pair.as_ref().map_or(0, |p| p.len());
        let enc = maybe_detach(py, len, || t.encode_full(&text, pair.as_deref(), add_special_tokens))
            .map_err(to_py_err)?;
        Ok(PyEncoding { inner: enc, ints: self.ints.clone() })
    }

    /// `encode` laid open, as a dict: "segments" (special-token cuts, each text segment's
    /// normalized text and pre-tokens with their ids), "tokens" (id, bytes, text, partial,
    /// special) and "times" (microseconds per step). The same shape the page gets from wasm.
    #[pyo3(signature = (text, *, allowed_special=None, disallowed_special=None))]
    fn trace<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        allowed_special: Option<&Bound<'py, PyAny>>,
        disallowed_special: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = text_of(text, "text")?;
        let (allowed, disallowed) = specials(allowed_special, disallowed_special)?;
        let t = &self.inner;
        let json = py
            .detach(|| {
                t.trace(&text, &allowed, &disallowed)
                    .map(|tr| serde_json::to_string(&tr).expect("a trace always serializes"))
            })
            .map_err(to_py_err)?;
        py.import("json")?.call_method1("loads", (json,))
    }

    /// Encodes text with no special tokens (their text is encoded as ordinary text).
    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let text = text_of(text, "text")?;
        let t = &self.inner;
        let ids = maybe_detach(py, text.len(), || t.encode_ordinary(&text));
        self.id_list(py, &ids)
    }

    /// `encode_ordinary` as a numpy uint32 array.
    fn encode_ordinary_to_numpy<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = text_of(text, "text")?;
        let t = &self.inner;
        ids_array(py, maybe_detach(py, text.len(), || t.encode_ordinary(&text)))
    }

    /// `encode` on each text, on `num_threads` threads (default `get_num_threads()`), without
    /// the GIL.
    #[pyo3(signature = (texts, *, num_threads=None, allowed_special=None, disallowed_special=None, add_special_tokens=false))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'_, PyList>,
        num_threads: Option<usize>,
        allowed_special: Option<&Bound<'_, PyAny>>,
        disallowed_special: Option<&Bound<'_, PyAny>>,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let specials = specials(allowed_special, disallowed_special)?;
        let flat = self.flat_of(py, texts, num_threads, specials, add_special_tokens)?;
        self.id_lists(py, &flat)
    }

    /// `encode_batch` as numpy arrays `(ids, offsets)`: uint32 ids end to end and int64
    /// offsets, text `i` being `ids[offsets[i]:offsets[i + 1]]`.
    #[pyo3(signature = (texts, *, num_threads=None, allowed_special=None, disallowed_special=None, add_special_tokens=false))]
    fn encode_batch_to_numpy<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'_, PyList>,
        num_threads: Option<usize>,
        allowed_special: Option<&Bound<'_, PyAny>>,
        disallowed_special: Option<&Bound<'_, PyAny>>,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let specials = specials(allowed_special, disallowed_special)?;
        flat_arrays(py, self.flat_of(py, texts, num_threads, specials, add_special_tokens)?)
    }

    /// `encode_ordinary` on each text, on threads.
    #[pyo3(signature = (texts, *, num_threads=None))]
    fn encode_ordinary_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'_, PyList>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let flat = self.flat_of(py, texts, num_threads, ordinary(), false)?;
        self.id_lists(py, &flat)
    }

    /// `encode_ordinary_batch` as numpy arrays `(ids, offsets)`, as `encode_batch_to_numpy`.
    #[pyo3(signature = (texts, *, num_threads=None))]
    fn encode_ordinary_batch_to_numpy<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'_, PyList>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        flat_arrays(py, self.flat_of(py, texts, num_threads, ordinary(), false)?)
    }

    /// The bytes of the tokens, concatenated.
    fn decode_bytes<'py>(&self, py: Python<'py>, tokens: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.inner.decode_bytes(&tokens).map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The tokens as text; `errors` as in `bytes.decode` ("replace": U+FFFD for bytes that
    /// are not valid UTF-8, as tiktoken does); `skip_special_tokens` leaves special tokens
    /// out, as `tokenizers`' decode does by default.
    #[pyo3(signature = (tokens, errors="replace", *, skip_special_tokens=false))]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        tokens: Vec<u32>,
        errors: &str,
        skip_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bytes = self.inner.decode_bytes_skipping(&tokens, skip_special_tokens).map_err(to_py_err)?;
        PyBytes::new(py, &bytes).call_method1("decode", ("utf-8", errors))
    }

    /// Each token's bytes.
    fn decode_tokens_bytes<'py>(
        &self,
        py: Python<'py>,
        tokens: Vec<u32>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        tokens
            .iter()
            .map(|&id| {
                let b = self.inner.token_bytes(id).ok_or_else(|| {
                    PyValueError::new_err(format!("token id {id} is not in the vocabulary"))
                })?;
                Ok(PyBytes::new(py, b))
            })
            .collect()
    }

    fn decode_single_token_bytes<'py>(&self, py: Python<'py>, token: u32) -> PyResult<Bound<'py, PyBytes>> {
        let b = self
            .inner
            .token_bytes(token)
            .ok_or_else(|| PyValueError::new_err(format!("token id {token} is not in the vocabulary")))?;
        Ok(PyBytes::new(py, b))
    }

    /// The text each token completes (a token ending inside a char gives "", the next one
    /// the whole char); the pieces join to `decode(tokens)`.
    fn decode_pieces(&self, tokens: Vec<u32>) -> PyResult<Vec<String>> {
        self.inner.decode_pieces(&tokens).map_err(to_py_err)
    }

    /// The id of a token given as bytes or str (a special token's text included).
    fn token_to_id(&self, token: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
        if let Ok(b) = token.cast::<PyBytes>() {
            return Ok(self.inner.token_to_id(b.as_bytes()));
        }
        Ok(self.inner.token_to_id(text_of(token, "token")?.as_bytes()))
    }

    /// The pre-tokens of `text` (after normalization; special tokens are not cut out).
    fn pre_tokenize_str(&self, text: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        Ok(self.inner.pre_tokenize(&text_of(text, "text")?))
    }

    /// How one pre-token (str or bytes) becomes ids: a dict with "bytes", "initial" (one id per
    /// byte), "steps" (each: index, left, right, rank, merged, parts), "whole_token" and "ids".
    fn trace_piece<'py>(&self, py: Python<'py>, piece: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let bytes: Vec<u8> = match piece.cast::<PyBytes>() {
            Ok(b) => b.as_bytes().to_vec(),
            Err(_) => text_of(piece, "piece")?.as_bytes().to_vec(),
        };
        let tr = self.inner.trace_piece(&bytes).map_err(to_py_err)?;
        let d = PyDict::new(py);
        d.set_item("bytes", PyBytes::new(py, &tr.bytes))?;
        d.set_item("initial", tr.initial)?;
        let steps = PyList::empty(py);
        for s in tr.steps {
            let st = PyDict::new(py);
            st.set_item("index", s.index)?;
            st.set_item("left", s.left)?;
            st.set_item("right", s.right)?;
            st.set_item("rank", s.rank)?;
            st.set_item("merged", s.merged)?;
            st.set_item("parts", s.parts)?;
            steps.append(st)?;
        }
        d.set_item("steps", steps)?;
        d.set_item("whole_token", tr.whole_token)?;
        d.set_item("ids", tr.ids)?;
        Ok(d)
    }

    /// A chat as ids: role markers become single special tokens, message text is always
    /// ordinary text (a typed `<|im_end|>` cannot end a message). `messages` is a list of
    /// dicts with "role" and "content"; `template` is "chatml", "harmony" or None (whichever
    /// this tokenizer has the special tokens for). Like transformers' `apply_chat_template`.
    ///
    /// >>> qwen.apply_chat_template([{"role": "user", "content": "Hi!"}])
    /// [151644, 872, 198, 13048, 0, 151645, 198, 151644, 77091, 198]
    #[pyo3(signature = (messages, *, add_generation_prompt=true, template=None, tokenize=true))]
    fn apply_chat_template<'py>(
        &self,
        py: Python<'py>,
        messages: &Bound<'py, PyAny>,
        add_generation_prompt: bool,
        template: Option<&str>,
        tokenize: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let owned = chat_messages(messages)?;
        let msgs: Vec<Message<'_>> = owned.iter().map(|(r, c)| Message { role: r, content: c }).collect();
        let t = self.chat_template(template)?;
        if !tokenize {
            return Ok(
                PyString::new(py, &t.render(&msgs, add_generation_prompt).map_err(to_py_err)?).into_any()
            );
        }
        let parts = t.encode(&self.inner, &msgs, add_generation_prompt).map_err(to_py_err)?;
        let ids: Vec<u32> = parts.into_iter().flat_map(|p| p.ids).collect();
        Ok(PyList::new(py, ids)?.into_any())
    }

    /// The same chat as `apply_chat_template`, piece by piece: a list of dicts with "kind"
    /// ("marker" or "text"), "text", "ids" and "message" (index; len(messages) for the
    /// generation prompt).
    #[pyo3(signature = (messages, *, add_generation_prompt=true, template=None))]
    fn chat_parts<'py>(
        &self,
        py: Python<'py>,
        messages: &Bound<'py, PyAny>,
        add_generation_prompt: bool,
        template: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        let owned = chat_messages(messages)?;
        let msgs: Vec<Message<'_>> = owned.iter().map(|(r, c)| Message { role: r, content: c }).collect();
        let parts = self
            .chat_template(template)?
            .encode(&self.inner, &msgs, add_generation_prompt)
            .map_err(to_py_err)?;
        let out = PyList::empty(py);
        for p in parts {
            let d = PyDict::new(py);
            d.set_item("kind", p.kind.name())?;
            d.set_item("text", p.text)?;
            d.set_item("ids", p.ids)?;
            d.set_item("message", p.message)?;
            out.append(d)?;
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "BpeTokenizer(name={:?}, pattern={:?}, n_vocab={})",
            self.inner.name(),
            self.inner.pattern().name(),
            self.inner.n_vocab()
        )
    }
}

impl PyBpeTokenizer {
    fn chat_template(&self, name: Option<&str>) -> PyResult<ChatTemplate> {
        match name {
            Some(n) => ChatTemplate::named(n),
            None => ChatTemplate::for_tokenizer(&self.inner),
        }
        .map_err(to_py_err)
    }
}

/// `[{"role": str, "content": str}, ...]` as owned (role, content) pairs.
fn chat_messages(messages: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    let iter = messages.try_iter().map_err(|_| {
        PyTypeError::new_err("messages must be a list of {\"role\": str, \"content\": str} dicts")
    })?;
    for (i, m) in iter.enumerate() {
        let m = m?;
        let field = |key: &str| -> PyResult<String> {
            let v =
                m.get_item(key).map_err(|_| PyValueError::new_err(format!("message {i} has no {key:?}")))?;
            Ok(text_of(&v, &format!("message {i}'s {key}"))?.into_owned())
        };
        out.push((field("role")?, field("content")?));
    }
    Ok(out)
}

/// Adds `BpeTokenizer` to the `_core` module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBpeTokenizer>()
}
