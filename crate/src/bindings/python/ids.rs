//! Lists of ids for Python: the Python int of each id of a tokenizer is made once and shared by
//! every list it returns, so a list costs one reference count increment per id instead of an
//! allocation (and a free when the list goes).

use pyo3::prelude::*;
use pyo3::types::PyList;

/// Lists of at most this many ids are built through a per-thread buffer, whose capacity so
/// stays small; longer ones through a vector of their own.
pub(crate) const BUFFERED_IDS: usize = 1024;

thread_local! {
    /// The ids buffer of short calls (inputs under [`super::DETACH_BYTES`] and Encodings of
    /// at most [`BUFFERED_IDS`] tokens).
    static IDS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's ids buffer, or on a fresh one if the buffer is in use (a call
/// re-entered from Python while `f` runs).
pub(crate) fn with_ids_buffer<R>(f: impl FnOnce(&mut Vec<u32>) -> R) -> R {
    IDS.with(|buf| {
        let mut own = Vec::new();
        let mut held = buf.try_borrow_mut().ok();
        f(held.as_deref_mut().unwrap_or(&mut own))
    })
}

/// The Python ints `0..n` of a tokenizer's ids.
pub(crate) struct IntCache {
    ints: Vec<Py<PyAny>>,
}

impl IntCache {
    /// The ints `0..n`.
    pub(crate) fn new(n: usize) -> Self {
        Python::attach(|py| IntCache {
            ints: (0..n as u32).map(|id| id.into_pyobject(py).expect("an int").into_any().unbind()).collect(),
        })
    }

    /// No cached ints (every id gets a fresh one).
    pub(crate) fn empty() -> Self {
        IntCache { ints: Vec::new() }
    }

    pub(crate) fn for_tokenizer(t: &crate::tokenizer::Tokenizer) -> std::sync::Arc<Self> {
        let n = t.model.vocab_r().len().max(t.added.iter().map(|a| a.id as usize + 1).max().unwrap_or(0));
        std::sync::Arc::new(IntCache::new(n))
    }

    /// `ids` as a Python list of the shared ints (a fresh int for an id past the cache).
    pub(crate) fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            ids.iter().map(|&id| match self.ints.get(id as usize) {
                Some(o) => o.bind(py).clone(),
                None => id.into_pyobject(py).expect("an int").into_any(),
            }),
        )
    }
}
