//! Python: `tokenprism.Unigram` (a Unigram model alone, shaped like the reference's
//! `tokenizers.models.Unigram`) and `tokenprism.normalize_precompiled` (a normalizer from its
//! tokenizer.json object, for SentencePiece's Precompiled char map).

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;

use super::{maybe_detach, text_of, to_py_err};
use crate::loaders::tokenizer_json::{parse_normalizer_json, parse_unigram};
use crate::models::unigram::{Token, Unigram};
use crate::normalizers::{AlignedText, Normalizer};
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
        Ok(tokens.iter().map(|t| (t.id, m.token_value(&text, t).to_owned(), (t.start, t.end))).collect())
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

/// The normalizer of a JSON object, remembering the last few: tests call with a few large
/// objects (char maps of ~250 KB) many times.
fn normalizer_of(json: &str) -> PyResult<Arc<Normalizer>> {
    const KEEP: usize = 4;
    static LAST: Mutex<Vec<(String, Arc<Normalizer>)>> = Mutex::new(Vec::new());
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, n)) = last.iter().find(|(j, _)| j == json) {
        return Ok(n.clone());
    }
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| to_py_err(Error::Json(e.to_string())))?;
    let n = Arc::new(parse_normalizer_json(&v).map_err(to_py_err)?);
    if last.len() == KEEP {
        last.remove(0);
    }
    last.push((json.to_owned(), n.clone()));
    Ok(n)
}

/// Normalizes `text` with the normalizer whose tokenizer.json object is `json` (any type the
/// loader knows; made for `Precompiled`). With `aligned`, also returns for each output char the
/// index of the input char it stems from.
#[pyfunction]
#[pyo3(signature = (json, text, aligned = false))]
fn normalize_precompiled(
    py: Python<'_>,
    json: &str,
    text: &Bound<'_, PyAny>,
    aligned: bool,
) -> PyResult<Py<PyAny>> {
    let n = normalizer_of(json)?;
    let text = text_of(text, "text")?;
    let out = maybe_detach(py, text.len(), || n.apply(AlignedText::new(&text), &mut |_, _| {}));
    if aligned {
        Ok((out.text, out.orig).into_pyobject(py)?.into_any().unbind())
    } else {
        Ok(out.text.into_pyobject(py)?.into_any().unbind())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUnigram>()?;
    m.add_function(wrap_pyfunction!(normalize_precompiled, m)?)?;
    Ok(())
}
