//! `Encoding`: the result of an encode, its fields as Python lists.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::ids::{with_ids_buffer, IntCache, BUFFERED_IDS};
use super::to_py_err;
use crate::tokenizer;

/// The result of an encode: ids, tokens, offsets and masks, one entry per token. Each
/// field's list is built from the compact core result when it is asked for.
#[pyclass(module = "tokenprism", name = "Encoding", frozen)]
pub struct PyEncoding {
    pub(super) inner: tokenizer::Encoding,
    pub(super) ints: std::sync::Arc<IntCache>,
}

#[pymethods]
impl PyEncoding {
    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        if self.inner.len() > BUFFERED_IDS {
            return self.ints.list(py, &self.inner.ids().collect::<Vec<u32>>());
        }
        // Short encodings: the ids go through the per-thread buffer (its capacity stays small).
        with_ids_buffer(|ids| {
            ids.clear();
            ids.extend(self.inner.ids());
            self.ints.list(py, ids)
        })
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
        PyErr::warn(
            py,
            &warning,
            c"Deprecated in 0.9.4: Encoding.words is deprecated, please use Encoding.word_ids instead.",
            1,
        )?;
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
        self.inner
            .overflowing()
            .iter()
            .map(|e| PyEncoding { inner: e.clone(), ints: self.ints.clone() })
            .collect()
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
            &ids,
            &type_ids,
            &tokens,
            &offsets,
            &word_ids,
            &sequence_ids,
            &special_tokens_mask,
            &attention_mask,
            n_sequences,
            overflowing,
        )
        .map_err(to_py_err)?;
        Ok(PyEncoding { inner, ints: std::sync::Arc::new(IntCache::empty()) })
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
