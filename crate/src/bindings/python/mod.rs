//! The Python binding (`tokenprism._core`): a thin layer over the core, shaped like
//! Hugging Face `tokenizers` (and tiktoken for `BpeTokenizer`): argument conversion and error
//! mapping only, one file per exposed concept.

mod array;
mod bpe;
mod decoder;
mod encoding;
mod ids;
mod normalizer;
mod pre_tokenizer;
mod tokenizer;
mod train;
#[cfg(feature = "general")]
mod unigram;

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::Error;

/// Inputs of at least this many bytes are tokenized without the GIL: releasing and re-taking
/// it costs about as much as tokenizing a few dozen bytes, and short calls are exactly where
/// per-call overhead shows.
pub(crate) const DETACH_BYTES: usize = 2048;

/// Runs `f` without the GIL when `input_len` is at least [`DETACH_BYTES`].
pub(crate) fn maybe_detach<T: Send>(py: Python<'_>, input_len: usize, f: impl FnOnce() -> T + Send) -> T {
    if input_len >= DETACH_BYTES {
        py.detach(f)
    } else {
        f()
    }
}

pub(crate) fn to_py_err(e: Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Borrows a Python str as UTF-8. `what` names the argument in the errors: a TypeError for
/// anything but a str, a ValueError for a lone surrogate (a Python str may hold one; UTF-8,
/// and therefore the tokenizer, cannot).
pub(crate) fn text_of<'a>(s: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, str>> {
    let s = s.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a str, not {}",
            s.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    match s.to_str() {
        Ok(t) => Ok(Cow::Borrowed(t)),
        Err(e) => {
            let py = s.py();
            let pos = e.value(py).getattr("start").ok().and_then(|v| v.extract::<usize>().ok());
            Err(PyValueError::new_err(match pos {
                Some(p) => format!(
                    "{what} contains a lone surrogate at index {p}, which is not valid Unicode text and cannot be tokenized"
                ),
                None => format!(
                    "{what} is not valid Unicode text (it contains a lone surrogate) and cannot be tokenized"
                ),
            }))
        }
    }
}

/// The texts of a batch, borrowed from `items` (which keeps them alive while the batch runs
/// without the GIL: a Python str's UTF-8 stays put as long as the str).
pub(crate) fn texts_of<'a>(items: &'a [Bound<'_, PyAny>]) -> PyResult<Vec<Cow<'a, str>>> {
    items.iter().map(|t| text_of(t, "text")).collect()
}

/// Unicode normalization (Unicode 15.0): `form` is "NFC", "NFD", "NFKC" or "NFKD".
///
/// >>> normalize("e\u0301", "NFC")
/// 'é'
#[pyfunction]
fn normalize(py: Python<'_>, text: &Bound<'_, PyAny>, form: &str) -> PyResult<String> {
    let form: crate::unicode::forms::Form =
        form.parse().map_err(|e: crate::unicode::forms::UnknownForm| PyValueError::new_err(e.to_string()))?;
    let text = text_of(text, "text")?;
    Ok(py.detach(|| crate::unicode::forms::normalize(&text, form)))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(tokenizer::set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(tokenizer::get_num_threads, m)?)?;
    m.add_class::<tokenizer::PyTokenizer>()?;
    m.add_class::<encoding::PyEncoding>()?;
    m.add_class::<normalizer::PyNormalizer>()?;
    m.add_class::<decoder::PyDecoder>()?;
    m.add_class::<pre_tokenizer::PyPreTokenizer>()?;
    bpe::register(m)?;
    train::register(m)?;
    #[cfg(feature = "general")]
    unigram::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
