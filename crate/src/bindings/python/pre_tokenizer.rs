//! `PreTokenizer`: one pre-tokenizer of a tokenizer.json on its own, as the reference's
//! `tokenizers.pre_tokenizers.*` objects are used: `pre_tokenize_str(text)`.

use pyo3::prelude::*;

use super::{maybe_detach, text_of, to_py_err};
use crate::normalizers::AlignedText;
use crate::pre_tokenizers::{PreTokenized, PreTokenizer};

/// A pre-tokenizer loaded from its JSON (the `pre_tokenizer` field of a tokenizer.json).
///
/// >>> pt = PreTokenizer.from_str('{"type": "Whitespace"}')
/// >>> pt.pre_tokenize_str("Hello, world")
/// [('Hello', (0, 5)), (',', (5, 6)), ('world', (7, 12))]
#[pyclass(module = "tokenprism", name = "PreTokenizer", frozen)]
pub struct PyPreTokenizer {
    inner: PreTokenizer,
}

#[pymethods]
impl PyPreTokenizer {
    #[staticmethod]
    fn from_str(json: &str) -> PyResult<Self> {
        let inner = crate::loaders::tokenizer_json::parse_pre_tokenizer_json(json).map_err(to_py_err)?;
        Ok(PyPreTokenizer { inner })
    }

    /// The pieces of `text`, each with its (start, end) offsets in chars of `text`.
    fn pre_tokenize_str(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<(String, (u32, u32))>> {
        let text = text_of(text, "text")?;
        // The reference starts from one split holding the whole text, and only a stage drops
        // empty splits: with no stage at all (an empty Sequence) an empty text stays one piece.
        if text.is_empty() && self.stages().is_empty() {
            return Ok(vec![(String::new(), (0, 0))]);
        }
        Ok(maybe_detach(py, text.len(), || {
            let out = self.inner.apply(PreTokenized::whole(AlignedText::new(&text)), &mut |_, _| {});
            (0..out.pieces.len())
                .map(|i| {
                    // A piece spans its first char's input char to its last one's.
                    let orig = out.piece_orig(i);
                    (out.piece_text(i).to_owned(), (orig[0], orig[orig.len() - 1] + 1))
                })
                .collect()
        }))
    }

    /// The names of the stages the pre-tokenizer runs, one per component.
    #[getter]
    fn stages(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        self.inner.stage_names(&mut names);
        names
    }
}
