//! Python: `tokenprism.Unigram`, a Unigram model alone, shaped like the reference's
//! `tokenizers.models.Unigram`.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::{maybe_detach, text_of, to_py_err};
use crate::loaders::tokenizer_json::parse_unigram;
use crate::models::unigram::{Lattice, Unigram};
use crate::models::Token;
use crate::Error;

/// A token as the reference's `Token.as_tuple()` gives it: (id, value, (start, end)).
type TokenTuple = (u32, String, (usize, usize));

/// A Unigram model read from its tokenizer.json object (`"type": "Unigram"`).
///
/// >>> m = Unigram.from_str('{"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]]}')
/// >>> m.tokenize("ab")
/// [(1, 'a', (0, 1)), (0, 'b', (1, 2))]
#[pyclass(module = "tokenprism", name = "Unigram", frozen)]
pub struct PyUnigram {
    inner: Arc<Unigram>,
}

#[pymethods]
impl PyUnigram {
    #[staticmethod]
    fn from_str(json: &str) -> PyResult<Self> {
        let v: serde_json::Value =
            serde_json::from_str(json).map_err(|e| to_py_err(Error::Json(e.to_string())))?;
        Ok(PyUnigram { inner: Arc::new(parse_unigram(&v, "model").map_err(to_py_err)?) })
    }

    /// The tokens of `text` as (id, value, (start, end)), offsets in bytes of its UTF-8, as
    /// the reference's `model.tokenize(text)` gives them (its Token objects' `as_tuple()`).
    fn tokenize(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Vec<TokenTuple>> {
        let text = text_of(text, "text")?;
        let m = &self.inner;
        let tokens = maybe_detach(py, text.len(), || {
            let mut out: Vec<Token> = Vec::new();
            m.tokenize(&text, &mut out).map(|()| out)
        })
        .map_err(to_py_err)?;
        Ok(tokens
            .iter()
            .map(|t| (t.id, m.token_value(&text, t).to_owned(), (t.start as usize, t.end as usize)))
            .collect())
    }

    /// How `piece` is split: the lattice of the Viterbi search, as a dict. "nodes": every
    /// vocabulary piece found at each char (start, end in chars, id, piece, score, unknown,
    /// best), and an unknown node for a char no one-char piece covers; those on the best path
    /// have best True. "tokens": what `tokenize` emits (start, end in chars, id, token).
    /// "chars", "score" (the best path's). Nodes are listed from the left until `max_nodes`:
    /// then "truncated" is True and "shown_chars" says where they stop.
    ///
    /// >>> m = Unigram.from_str('{"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0], ["ab", -1.5], ["b", -1.0]]}')
    /// >>> [(n["piece"], n["best"]) for n in m.lattice("ab")["nodes"]]
    /// [('a', False), ('ab', True), ('b', False)]
    #[pyo3(signature = (piece, max_nodes = 1000))]
    fn lattice<'py>(
        &self,
        py: Python<'py>,
        piece: &Bound<'py, PyAny>,
        max_nodes: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let piece = text_of(piece, "piece")?;
        let lattice = self.inner.lattice(&piece, max_nodes).map_err(to_py_err)?;
        lattice_dict(py, &lattice)
    }

    /// The (piece, score) list, in id order.
    #[getter]
    fn vocab(&self) -> Vec<(String, f64)> {
        self.inner.vocab().to_vec()
    }

    #[getter]
    fn unk_id(&self) -> Option<u32> {
        self.inner.unk_id()
    }

    #[getter]
    fn byte_fallback(&self) -> bool {
        self.inner.byte_fallback()
    }

    fn get_vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id).map(str::to_owned)
    }
}

/// A lattice as the dict both bindings give (built here, not through JSON, so that scores
/// keep every bit).
pub(crate) fn lattice_dict<'py>(py: Python<'py>, lattice: &Lattice) -> PyResult<Bound<'py, PyAny>> {
    let nodes = PyList::empty(py);
    for n in &lattice.nodes {
        let d = PyDict::new(py);
        d.set_item("start", n.start)?;
        d.set_item("end", n.end)?;
        d.set_item("id", n.id)?;
        d.set_item("piece", &n.piece)?;
        d.set_item("score", n.score)?;
        d.set_item("unknown", n.unknown)?;
        d.set_item("best", n.best)?;
        nodes.append(d)?;
    }
    let tokens = PyList::empty(py);
    for t in &lattice.tokens {
        let d = PyDict::new(py);
        d.set_item("start", t.start)?;
        d.set_item("end", t.end)?;
        d.set_item("id", t.id)?;
        d.set_item("token", &t.token)?;
        tokens.append(d)?;
    }
    let d = PyDict::new(py);
    d.set_item("chars", lattice.chars)?;
    d.set_item("shown_chars", lattice.shown_chars)?;
    d.set_item("truncated", lattice.truncated)?;
    d.set_item("nodes", nodes)?;
    d.set_item("tokens", tokens)?;
    d.set_item("score", lattice.score)?;
    Ok(d.into_any())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUnigram>()?;
    Ok(())
}
