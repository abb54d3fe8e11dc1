//! The Python binding (`tokenprism._core`): a thin layer over the core, shaped like
//! Hugging Face `tokenizers`. No logic lives only here.

mod bpe;
mod train;

use crate::tokenizer::{self, Direction, Padding, PaddingStrategy, Truncation, TruncationStrategy};
use crate::Error;
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

/// Runs `f` without the GIL when the input is long enough for that to pay: releasing and
/// re-taking the GIL costs about as much as tokenizing a few dozen bytes, and short calls
/// are exactly where per-call overhead shows.
pub(crate) fn maybe_detach<T: Send>(py: Python<'_>, input_len: usize, f: impl FnOnce() -> T + Send) -> T {
    if input_len >= 2048 {
        py.detach(f)
    } else {
        f()
    }
}

thread_local! {
    /// The ids buffer of short `encode_ids` calls (inputs under 2 KB) and of `Encoding.ids` of
    /// at most 1024 tokens: its capacity stays small.
    static IDS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's [`IDS`] buffer, or on a fresh one if the buffer is in use (a call
/// re-entered from Python while `f` runs).
fn with_ids_buffer<R>(f: impl FnOnce(&mut Vec<u32>) -> R) -> R {
    IDS.with(|buf| {
        let mut own = Vec::new();
        let mut held = buf.try_borrow_mut().ok();
        f(held.as_deref_mut().unwrap_or(&mut own))
    })
}

fn to_py_err(e: Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Borrows a Python str as UTF-8, turning a lone surrogate into a clear ValueError
/// (a Python str may hold one; UTF-8 and therefore the tokenizer cannot).
fn text_of<'a>(s: &'a Bound<'_, PyAny>, what: &str) -> PyResult<std::borrow::Cow<'a, str>> {
    let s = s.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a str, not {}",
            s.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    match s.to_str() {
        Ok(t) => Ok(std::borrow::Cow::Borrowed(t)),
        Err(e) => {
            let py = s.py();
            let pos = e.value(py).getattr("start").ok().and_then(|v| v.extract::<usize>().ok());
            Err(PyValueError::new_err(match pos {
                Some(p) => format!("{what} contains a lone surrogate at index {p}, which is not valid Unicode text and cannot be tokenized"),
                None => format!("{what} is not valid Unicode text (it contains a lone surrogate) and cannot be tokenized"),
            }))
        }
    }
}

/// The Python int of each id of a tokenizer, shared by every list of ids it returns (and by
/// `BpeTokenizer`'s): a fresh int per id is an allocation, and a free when the list goes, where
/// a shared one is a reference count increment.
///
/// Building a list of ids is bound by memory, not instructions: each id touches its int (one
/// increment now, one decrement when the list goes), and the ints of a 200k vocabulary are 6.4
/// MB. Where it can (CPython 3.11 and older, see [`IntTable`]), the ints are copies in one
/// process-wide block in id order, so int `id` is at `base + id` with no table of pointers to
/// read first (one memory access per id instead of two dependent ones; o200k English from
/// Python, 4 KB documents: 8% less time per MB than owned ints behind pointers, and with one
/// int for every id, the list would cost 0.15 of the core's time where it costs 0.68 with
/// owned ints); elsewhere, one owned int per id.
pub(crate) struct IntCache {
    /// Ids `0..n` have an int here; a larger id gets a fresh int.
    n: usize,
    ints: Ints,
}

enum Ints {
    /// Int `id` at `small + id` for `id < SMALL` (CPython's own small ints, laid out that way:
    /// checked), else at `table + id` (the [`IntTable`]'s slots, filled up to at least `n`).
    Table { small: *mut Slot, table: *mut Slot },
    /// One owned int per id.
    Owned(Vec<Py<PyAny>>),
}

// SAFETY: the pointers of `Ints::Table` point into memory that lives as long as the process (the
// table is never freed, CPython's small ints are static) and are only dereferenced with the GIL
// held (`IntCache::list` takes `Python`), which serializes every reference count change on them.
unsafe impl Send for IntCache {}
unsafe impl Sync for IntCache {}

/// CPython's cached small ints are 0..=256 (`_PY_NSMALLPOSINTS`).
const SMALL: usize = 257;
/// The table's capacity in ids: 2^18 covers every vocabulary the project loads (o200k's 200k,
/// Gemma's 256k); a larger one gets owned ints. Zeroed pages never written are never resident.
const TABLE_SLOTS: usize = 1 << 18;

/// One int's memory: 32 bytes, as a 3.11 int below 2^30 takes (refcount, type, size, one
/// 30-bit digit: 28 bytes) and as CPython's small-int array is strided (checked).
#[repr(C, align(32))]
#[derive(Clone, Copy)]
struct Slot([u8; 32]);

/// The process-wide table of ints `SMALL..filled`: copies of real CPython ints, one per slot at
/// index `id`, each with a reference count of 1 that belongs to the table and is never released,
/// so none of them is ever deallocated (CPython would hand memory it did not allocate to its
/// allocator); the table itself is leaked, so every pointer into it stays valid for the process.
/// Ints are immutable and carry no pointer to themselves or to other objects besides their
/// type, and are not tracked by the garbage collector: a byte copy is the same int.
struct IntTable {
    small: *mut Slot,
    table: *mut Slot,
    filled: usize,
}

// SAFETY: the table's memory is only read or written with the GIL held (see `table_ints`).
unsafe impl Send for IntTable {}

/// `None` until first asked; `Some(None)` where this Python's ints cannot be laid out here.
static INT_TABLE: std::sync::Mutex<Option<Option<IntTable>>> = std::sync::Mutex::new(None);

/// The size in bytes of an int object: its type's base size plus its digits.
///
/// # Safety
/// `o` is a live int and the GIL is held.
unsafe fn int_bytes(o: *mut ffi::PyObject) -> usize {
    let t = ffi::Py_TYPE(o);
    (*t).tp_basicsize as usize + ffi::Py_SIZE(o).unsigned_abs() * (*t).tp_itemsize as usize
}

/// Where CPython's small ints are, if this Python's ints can be copied into slots: CPython 3.11
/// or older (3.12 changed the int layout and made small ints immortal), ints of at most 32
/// bytes (not so in a `Py_TRACE_REFS` build, whose objects carry list links and must not be
/// copied), the small ints 0..SMALL one slot apart.
fn small_ints(py: Python<'_>) -> Option<*mut Slot> {
    if py.version_info() >= (3, 12) {
        return None;
    }
    // SAFETY: the GIL is held (`py`). PyLong_FromSsize_t returns a new reference (or NULL);
    // each is released after its address and size are read. The small ints are static in the
    // interpreter (the runtime keeps a reference to each for the process), so their addresses
    // stay valid after the release.
    unsafe {
        let zero = ffi::PyLong_FromSsize_t(0);
        if zero.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let mut ok = true;
        for i in 0..SMALL {
            let o = ffi::PyLong_FromSsize_t(i as ffi::Py_ssize_t);
            if o.is_null() {
                ffi::PyErr_Clear();
                ok = false;
                break;
            }
            ok &= o.cast::<Slot>() == zero.cast::<Slot>().wrapping_add(i)
                && ffi::Py_TYPE(o) == &raw mut ffi::PyLong_Type
                && int_bytes(o) <= std::mem::size_of::<Slot>();
            ffi::Py_DECREF(o);
        }
        ffi::Py_DECREF(zero);
        ok.then_some(zero.cast())
    }
}

/// The table's (small, table) pointers with ints `0..n` in place, or None (ints cannot be laid
/// out here, or `n` is over the table's capacity).
fn table_ints(py: Python<'_>, n: usize) -> Option<(*mut Slot, *mut Slot)> {
    if n > TABLE_SLOTS {
        return None;
    }
    // The GIL is held while the lock is (no one takes them in the other order), and every
    // write to the table happens here, under both.
    let mut guard = INT_TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let t = guard
        .get_or_insert_with(|| {
            let small = small_ints(py)?;
            // Zeroed memory straight from the allocator: pages never written stay unmapped.
            let layout = std::alloc::Layout::array::<Slot>(TABLE_SLOTS).expect("a 8 MB layout");
            // SAFETY: the layout's size is not zero. The memory is never freed (see `IntTable`).
            let table = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<Slot>();
            (!table.is_null()).then_some(IntTable { small, table, filled: SMALL })
        })
        .as_mut()?;
    while t.filled < n {
        let id = t.filled;
        // SAFETY: the GIL is held. `o` is a new reference to the int `id` (SMALL <= id <
        // TABLE_SLOTS < 2^30: one digit, 28 bytes in the layout `small_ints` checked), copied
        // into slot `id` (in bounds: id < TABLE_SLOTS) before it is released; the copy's
        // reference count (3.11: the object's first field, an isize) is set to 1, the table's
        // own reference, never released (see `IntTable`).
        unsafe {
            let o = ffi::PyLong_FromSize_t(id);
            if o.is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            let size = int_bytes(o);
            assert!(size <= std::mem::size_of::<Slot>(), "an int of {size} bytes");
            let slot = t.table.add(id);
            std::ptr::copy_nonoverlapping(o.cast::<u8>(), slot.cast::<u8>(), size);
            *slot.cast::<ffi::Py_ssize_t>() = 1;
            ffi::Py_DECREF(o);
        }
        t.filled += 1;
    }
    Some((t.small, t.table))
}

impl IntCache {
    /// The ints `0..n`.
    pub(crate) fn new(n: usize) -> Self {
        Python::attach(|py| {
            let ints = match table_ints(py, n) {
                Some((small, table)) => Ints::Table { small, table },
                None => Ints::Owned(
                    (0..n as u32)
                        .map(|id| id.into_pyobject(py).expect("an int").into_any().unbind())
                        .collect(),
                ),
            };
            IntCache { n, ints }
        })
    }

    /// No cached ints (every id gets a fresh one).
    fn empty() -> Self {
        IntCache { n: 0, ints: Ints::Owned(Vec::new()) }
    }

    fn for_tokenizer(t: &tokenizer::Tokenizer) -> std::sync::Arc<Self> {
        let n = t.model.vocab_r.len().max(t.added.iter().map(|a| a.id as usize + 1).max().unwrap_or(0));
        std::sync::Arc::new(IntCache::new(n))
    }

    /// `ids` as a Python list: the list's item array filled in place, one reference count
    /// increment per id.
    pub(crate) fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let n = ids.len();
        // Whether every id has its int here (always, but for ids past a vocabulary a caller
        // made up): then the loops below have no other branch.
        let all_cached = (ids.iter().copied().max().unwrap_or(0) as usize) < self.n;
        // SAFETY: the GIL is held (`py`). PyList_New(n) returns a new reference to a list whose
        // n item slots are NULL (an array of n pointers when n > 0), or NULL with an exception
        // set. Each slot is written once, with an owned reference: a cached int after
        // Py_INCREF (the cache or the table holds a reference to each int it hands out for at
        // least as long as `self` lives, and ids below `self.n` are in place: see `Ints`), or
        // a fresh int. Nothing here runs Python code or allocates a GC-tracked object (ints
        // are not tracked), so no one sees the list before it is returned; on an error it is
        // released (list_dealloc skips the NULL slots).
        unsafe {
            let list = ffi::PyList_New(n as ffi::Py_ssize_t);
            if list.is_null() {
                return Err(PyErr::fetch(py));
            }
            if n > 0 {
                let items = std::slice::from_raw_parts_mut((*list.cast::<ffi::PyListObject>()).ob_item, n);
                match (&self.ints, all_cached) {
                    (Ints::Table { small, table }, true) => {
                        for (item, &id) in items.iter_mut().zip(ids) {
                            let id = id as usize;
                            let o = if id < SMALL { *small } else { *table }.add(id).cast::<ffi::PyObject>();
                            ffi::Py_INCREF(o);
                            *item = o;
                        }
                    }
                    (Ints::Owned(v), true) => {
                        for (item, &id) in items.iter_mut().zip(ids) {
                            let o = v.get_unchecked(id as usize).as_ptr();
                            ffi::Py_INCREF(o);
                            *item = o;
                        }
                    }
                    (_, false) => {
                        for (item, &id) in items.iter_mut().zip(ids) {
                            let o = match self.get(id as usize) {
                                Some(o) => {
                                    ffi::Py_INCREF(o);
                                    o
                                }
                                None => ffi::PyLong_FromUnsignedLong(id.into()),
                            };
                            if o.is_null() {
                                ffi::Py_DECREF(list);
                                return Err(PyErr::fetch(py));
                            }
                            *item = o;
                        }
                    }
                }
            }
            Ok(Bound::from_owned_ptr(py, list).cast_into_unchecked())
        }
    }

    /// The cached int of `id` (a borrowed reference), if `id < self.n`.
    fn get(&self, id: usize) -> Option<*mut ffi::PyObject> {
        if id >= self.n {
            return None;
        }
        Some(match &self.ints {
            // In bounds: the small ints are 0..SMALL, the table's slots 0..TABLE_SLOTS >= n.
            Ints::Table { small, table } => unsafe {
                if id < SMALL { *small } else { *table }.add(id).cast()
            },
            Ints::Owned(v) => v[id].as_ptr(),
        })
    }
}

/// The result of an encode: ids, tokens, offsets and masks, one entry per token. Each
/// field's list is built from the compact core result when it is asked for.
#[pyclass(module = "tokenprism", name = "Encoding", frozen)]
pub struct PyEncoding {
    inner: tokenizer::Encoding,
    ints: std::sync::Arc<IntCache>,
}

#[pymethods]
impl PyEncoding {
    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        if self.inner.len() > 1024 {
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

/// A tokenizer's normalizer, for `tokenizer.normalizer.normalize_str(text)`.
#[pyclass(module = "tokenprism", name = "Normalizer", frozen)]
pub struct PyNormalizer {
    tokenizer: std::sync::Arc<tokenizer::Tokenizer>,
}

#[pymethods]
impl PyNormalizer {
    fn normalize_str(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<String> {
        let text = text_of(text, "text")?;
        let t = &self.tokenizer;
        Ok(maybe_detach(py, text.len(), || t.normalize_str(&text, None).into_owned()))
    }
}

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
}

/// Threads `encode_batch` uses; 0 means one per CPU.
static NUM_THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn batch_threads(arg: Option<usize>) -> usize {
    match arg.unwrap_or_else(|| NUM_THREADS.load(std::sync::atomic::Ordering::Relaxed)) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Sets how many threads `encode_batch` uses by default (0: one per CPU).
#[pyfunction]
fn set_num_threads(n: usize) {
    NUM_THREADS.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// How many threads `encode_batch` uses by default.
#[pyfunction]
fn get_num_threads() -> usize {
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

#[pymethods]
impl PyTokenizer {
    /// Loads a `tokenizer.json` (or, if the file is not JSON, a `vocab.txt` with BERT defaults).
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let bytes =
            std::fs::read(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
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

    /// Just the ids, without offsets, token texts or masks: the fastest way to get ids.
    #[pyo3(signature = (sequence, add_special_tokens=true))]
    fn encode_ids<'py>(
        &self,
        py: Python<'py>,
        sequence: &Bound<'py, PyAny>,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let a = text_of(sequence, "sequence")?;
        let t = &self.inner;
        if a.len() >= 2048 {
            let ids =
                maybe_detach(py, a.len(), || t.encode_ids(&a, add_special_tokens)).map_err(to_py_err)?;
            return self.ints.list(py, &ids);
        }
        // Short inputs: the ids go to a per-thread buffer and straight into the list, so a
        // call allocates nothing but the Python objects.
        with_ids_buffer(|ids| {
            t.encode_ids_into(&a, add_special_tokens, ids).map_err(to_py_err)?;
            self.ints.list(py, ids)
        })
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
    fn decode(&self, ids: Vec<u32>, skip_special_tokens: bool) -> String {
        self.inner.decode(&ids, skip_special_tokens)
    }

    #[pyo3(signature = (sequences, skip_special_tokens=true))]
    fn decode_batch(&self, sequences: Vec<Vec<u32>>, skip_special_tokens: bool) -> Vec<String> {
        sequences.iter().map(|ids| self.inner.decode(ids, skip_special_tokens)).collect()
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
        // Padding to a multiple of 2**40 would ask for terabytes (an abort, found by
        // tests/core/test_hostile.py); tokenizer.json files are held to the same limit.
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
        self.inner.normalizer.as_ref().map(|_| PyNormalizer { tokenizer: self.inner.clone() })
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
            self.inner.model.vocab.len()
        }
    }

    /// Every stage of one run on `text`, as a dict (the same shape the page gets from wasm).
    fn trace<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let text = text_of(text, "text")?;
        let t = &self.inner;
        let json = py.detach(|| serde_json::to_string(&t.trace(&text)).expect("a trace always serializes"));
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
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_class::<PyTokenizer>()?;
    m.add_class::<PyEncoding>()?;
    m.add_class::<PyNormalizer>()?;
    crate::bindings::python::bpe::register(m)?;
    crate::bindings::python::train::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
