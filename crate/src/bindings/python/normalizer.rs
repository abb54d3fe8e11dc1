//! `Normalizer`: a tokenizer's normalizer, or one loaded from its tokenizer.json JSON.

use std::sync::Arc;

use pyo3::prelude::*;

use super::{maybe_detach, text_of, to_py_err};
use crate::normalizers::{aligned, AlignedText, Normalizer};
use crate::tokenizer::Tokenizer;

enum Inner {
    /// A tokenizer's normalizer, run with the tokenizer's fast paths.
    Tokenizer(Arc<Tokenizer>),
    Own(Normalizer),
}

/// A normalizer: `tokenizer.normalizer`, or `Normalizer.from_str(json)` with the JSON of one
/// (e.g. `json.dumps(tokenizer_json["normalizer"])`).
///
/// >>> Normalizer.from_str('{"type": "Lowercase"}').normalize_str("ÀB")
/// 'àb'
#[pyclass(module = "tokenprism", name = "Normalizer", frozen)]
pub struct PyNormalizer {
    inner: Inner,
}

impl PyNormalizer {
    pub(crate) fn of_tokenizer(t: Arc<Tokenizer>) -> Self {
        PyNormalizer { inner: Inner::Tokenizer(t) }
    }

    fn normalizer(&self) -> &Normalizer {
        match &self.inner {
            Inner::Tokenizer(t) => t.normalizer.as_ref().expect("handed out only when there is one"),
            Inner::Own(n) => n,
        }
    }
}

#[pymethods]
impl PyNormalizer {
    #[staticmethod]
    fn from_str(json: &str) -> PyResult<Self> {
        let n = crate::loaders::tokenizer_json::parse_normalizer_json(json).map_err(to_py_err)?;
        Ok(PyNormalizer { inner: Inner::Own(n) })
    }

    fn normalize_str(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<String> {
        let text = text_of(text, "text")?;
        maybe_detach(py, text.len(), || match &self.inner {
            Inner::Tokenizer(t) => Ok(t.normalize_str(&text, None).into_owned()),
            Inner::Own(n) => n.try_normalize(&text),
        })
        .map_err(to_py_err)
    }

    /// For each char of the normalized text, the range of input chars it stems from, as the
    /// reference's offsets report a token made of that char alone: `(i, i + 1)`, or `(0, 0)`
    /// for a char inserted before all others.
    fn alignments(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Vec<(u32, u32)>> {
        let text = text_of(text, "text")?;
        let n = self.normalizer();
        maybe_detach(py, text.len(), || {
            let t = n.try_apply(AlignedText::new(&text), &mut |_, _| {})?;
            Ok(t.orig.iter().map(|o| aligned::span(std::slice::from_ref(o), 0)).collect())
        })
        .map_err(to_py_err)
    }
}
