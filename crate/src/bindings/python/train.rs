//! Python: `tokenprism.train_bpe(texts, vocab_size, *, byte_level=False, min_frequency=0,
//! progress=None)` and its result, `tokenprism.TrainedBpe`. A thin layer over
//! [`crate::train::Trainer`].

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use super::bpe::PyBpeTokenizer;
use super::{text_of, to_py_err};
use crate::pre_tokenizers::byte_level::alphabet::byte_level_encode;
use crate::train::{export, Config, Control, Mode, Trainer};

/// The result of `train_bpe`: the merges in order with their pair counts, the vocabulary,
/// and the chapter's `tokenize`.
#[pyclass(module = "tokenprism", name = "TrainedBpe", frozen)]
pub struct PyTrainedBpe {
    inner: Trainer,
    cancelled: bool,
}

impl PyTrainedBpe {
    /// A symbol as Python sees it: its text, or for byte-level its GPT-2 byte-level spelling.
    fn sym(&self, id: u32) -> String {
        match self.inner.mode() {
            Mode::Chapter => self.inner.symbol_text(id),
            Mode::ByteLevel => byte_level_encode(&self.inner.symbols()[id as usize]),
        }
    }
}

#[pymethods]
impl PyTrainedBpe {
    /// The merge rules in training order, as (left, right) pairs (the chapter's `merges`).
    #[getter]
    fn merges(&self) -> Vec<(String, String)> {
        self.inner.merges().iter().map(|m| (self.sym(m.left), self.sym(m.right))).collect()
    }

    /// How often each merged pair occurred when it was chosen.
    #[getter]
    fn counts(&self) -> Vec<u64> {
        self.inner.merges().iter().map(|m| m.count).collect()
    }

    /// Token text -> id: the initial symbols, then each new merged string.
    #[getter]
    fn vocab<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for id in 0..self.inner.symbols().len() as u32 {
            d.set_item(self.sym(id), id)?;
        }
        Ok(d)
    }

    /// Size of the vocabulary before any merge.
    #[getter]
    fn initial_vocab_size(&self) -> usize {
        self.inner.initial_len()
    }

    #[getter]
    fn byte_level(&self) -> bool {
        self.inner.mode() == Mode::ByteLevel
    }

    /// True if the progress callback stopped training early.
    #[getter]
    fn cancelled(&self) -> bool {
        self.cancelled
    }

    /// The chapter's `tokenize(word, merges)`: chars plus "_" (byte-level: the word's bytes,
    /// spelled as in the vocabulary), then every merge in training order.
    fn tokenize(&self, word: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let word = text_of(word, "word")?;
        Ok(match self.inner.mode() {
            Mode::Chapter => self
                .inner
                .tokenize_bytes(&word)
                .into_iter()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .collect(),
            Mode::ByteLevel => {
                self.inner.tokenize_bytes(&word).iter().map(|b| byte_level_encode(b)).collect()
            }
        })
    }

    /// A Hugging Face tokenizer.json (GPT-2 layout) for a byte-level result.
    fn to_tokenizer_json(&self) -> PyResult<String> {
        export::tokenizer_json(&self.inner).map_err(to_py_err)
    }

    /// A byte-level result as a `BpeTokenizer`.
    fn tokenizer(&self) -> PyResult<PyBpeTokenizer> {
        export::tokenizer(&self.inner).map(PyBpeTokenizer::from_inner).map_err(to_py_err)
    }

    fn __len__(&self) -> usize {
        self.inner.merges().len()
    }

    fn __repr__(&self) -> String {
        format!(
            "TrainedBpe(byte_level={}, merges={}, vocab={}{})",
            if self.byte_level() { "True" } else { "False" },
            self.inner.merges().len(),
            self.inner.symbols().len(),
            if self.cancelled { ", cancelled=True" } else { "" }
        )
    }
}

/// Trains BPE on `texts` (a str or an iterable of str) until the vocabulary has `vocab_size`
/// symbols. `byte_level=False` is the textbook chapter's algorithm (whitespace-split words,
/// chars plus "_", same merges and tie-breaking); `byte_level=True` starts from the 256
/// bytes and splits words with GPT-2's pre-tokenizer. `progress(done, (left, right), count)`
/// is called after each merge; returning False or "stop" ends training early (the result
/// then has `cancelled=True`), and an exception it raises propagates.
#[pyfunction]
#[pyo3(signature = (texts, vocab_size, *, byte_level=false, min_frequency=0, progress=None))]
pub fn train_bpe(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    vocab_size: i64,
    byte_level: bool,
    min_frequency: i64,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<PyTrainedBpe> {
    let owned: Vec<String> = if texts.is_instance_of::<PyString>() {
        vec![text_of(texts, "texts")?.into_owned()]
    } else {
        let it = texts
            .try_iter()
            .map_err(|_| PyTypeError::new_err("texts must be a str or an iterable of str"))?;
        it.map(|t| Ok(text_of(&t?, "each text")?.into_owned())).collect::<PyResult<_>>()?
    };
    if vocab_size < 0 {
        return Err(PyValueError::new_err(format!("vocab_size must be >= 0, not {vocab_size}")));
    }
    if min_frequency < 0 {
        return Err(PyValueError::new_err(format!("min_frequency must be >= 0, not {min_frequency}")));
    }
    if let Some(p) = &progress {
        if !p.is_callable() {
            return Err(PyTypeError::new_err("progress must be callable"));
        }
    }
    let config = Config {
        mode: if byte_level { Mode::ByteLevel } else { Mode::Chapter },
        vocab_size: vocab_size as usize,
        min_frequency: min_frequency as u64,
    };
    let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut trainer = py.detach(|| Trainer::new(&refs, &config)).map_err(to_py_err)?;
    let spell =
        |s: &[u8]| if byte_level { byte_level_encode(s) } else { String::from_utf8_lossy(s).into_owned() };
    let finished = match &progress {
        None => py.detach(|| trainer.train(|_| Control::Continue, None)),
        Some(cb) => {
            let mut error: Option<PyErr> = None;
            let finished = trainer.train(
                |p| {
                    let pair = PyTuple::new(py, [spell(p.left), spell(p.right)]);
                    let r = pair.and_then(|pair| cb.call1((p.done, pair, p.count)));
                    match r {
                        Err(e) => {
                            error = Some(e);
                            Control::Stop
                        }
                        Ok(v) => {
                            let stop = v.is_instance_of::<pyo3::types::PyBool>()
                                && !v.is_truthy().unwrap_or(true)
                                || v.cast::<PyString>().is_ok_and(|s| s.to_str().is_ok_and(|s| s == "stop"));
                            if stop {
                                Control::Stop
                            } else {
                                Control::Continue
                            }
                        }
                    }
                },
                None,
            );
            if let Some(e) = error {
                return Err(e);
            }
            finished
        }
    };
    trainer.finish();
    Ok(PyTrainedBpe { inner: trainer, cancelled: !finished })
}

/// Adds `train_bpe` and `TrainedBpe` to the `_core` module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTrainedBpe>()?;
    m.add_function(wrap_pyfunction!(train_bpe, m)?)
}
