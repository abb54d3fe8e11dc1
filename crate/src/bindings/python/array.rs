//! Ids as numpy arrays that own the Rust buffer: a small object takes the `Vec` and exports
//! it through the buffer protocol, `numpy.frombuffer` wraps it, and the array keeps it as its
//! base, so the ids are never copied and are freed with the last array (or view) using them.
//! numpy is imported on the first array call, never by `import tokenprism`.

use std::ffi::{c_int, c_void, CStr};
use std::ptr::{null_mut, NonNull};

use pyo3::exceptions::{PyBufferError, PyImportError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;

use crate::tokenizer::FlatIds;

/// The element types handed to numpy: ids (uint32) and batch offsets (int64).
#[derive(Clone, Copy)]
enum Kind {
    U32,
    I64,
}

trait Element: Sized {
    const KIND: Kind;
}

impl Element for u32 {
    const KIND: Kind = Kind::U32;
}

impl Element for i64 {
    const KIND: Kind = Kind::I64;
}

/// A `Vec<u32>` or `Vec<i64>` taken apart (put together again to be freed), exported as a
/// writable one-dimensional buffer of its elements.
#[pyclass(module = "tokenprism", name = "_ArrayBuffer", frozen)]
struct ArrayBuffer {
    /// The vector's allocation. Python writes through it (the array is writable), so Rust
    /// makes no reference to the elements: only `Drop` touches them, to free them.
    ptr: NonNull<c_void>,
    len: usize,
    cap: usize,
    kind: Kind,
    /// The view's shape (`len`) and stride (the item size), which `Py_buffer` points into.
    shape: [ffi::Py_ssize_t; 1],
    strides: [ffi::Py_ssize_t; 1],
}

// SAFETY: an ArrayBuffer owns its allocation alone, as the Vec it was made of did (a Vec of
// Send elements is Send).
unsafe impl Send for ArrayBuffer {}
// SAFETY: Rust code never reads or writes the elements through a shared ArrayBuffer (only
// `Drop`, which has it exclusively); what Python does with the exported memory is governed
// by the buffer protocol, as for a bytearray.
unsafe impl Sync for ArrayBuffer {}

impl ArrayBuffer {
    fn new<T: Element>(v: Vec<T>) -> Self {
        let mut v = std::mem::ManuallyDrop::new(v);
        let (len, cap) = (v.len(), v.capacity());
        let ptr = NonNull::new(v.as_mut_ptr().cast::<c_void>()).expect("a Vec's pointer is never null");
        let itemsize = std::mem::size_of::<T>() as ffi::Py_ssize_t;
        ArrayBuffer { ptr, len, cap, kind: T::KIND, shape: [len as ffi::Py_ssize_t], strides: [itemsize] }
    }

    fn format(&self) -> &'static CStr {
        match self.kind {
            Kind::U32 => c"I",
            Kind::I64 => c"q",
        }
    }
}

impl Drop for ArrayBuffer {
    fn drop(&mut self) {
        // SAFETY: ptr, len and cap are those of a Vec of the element type `kind` names (the
        // one `new` took apart, which never freed it), and this is the only place that
        // rebuilds it.
        unsafe {
            match self.kind {
                Kind::U32 => drop(Vec::from_raw_parts(self.ptr.as_ptr().cast::<u32>(), self.len, self.cap)),
                Kind::I64 => drop(Vec::from_raw_parts(self.ptr.as_ptr().cast::<i64>(), self.len, self.cap)),
            }
        }
    }
}

#[pymethods]
impl ArrayBuffer {
    /// Fills `view` for a consumer (numpy, memoryview): the elements, writable, with their
    /// format, shape and strides when asked for.
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no Py_buffer to fill"));
        }
        let me = slf.get();
        let asked = |flag: c_int| flags & flag == flag;
        // SAFETY: `view` is the non-null Py_buffer CPython passes to fill. Every pointer put
        // in it points into `me` (the allocation, shape, strides) or to a static string, and
        // stays valid while the view holds its reference to `slf` (`obj`): `me` is frozen
        // and is dropped only with the object. The consumer does not write to format, shape
        // or strides (the buffer protocol's contract), so handing them out as *mut is sound.
        unsafe {
            (*view).obj = slf.clone().into_any().into_ptr();
            (*view).buf = me.ptr.as_ptr();
            (*view).len = me.shape[0] * me.strides[0];
            (*view).itemsize = me.strides[0];
            (*view).readonly = 0;
            (*view).ndim = 1;
            (*view).format =
                if asked(ffi::PyBUF_FORMAT) { me.format().as_ptr().cast_mut() } else { null_mut() };
            (*view).shape = if asked(ffi::PyBUF_ND) { me.shape.as_ptr().cast_mut() } else { null_mut() };
            (*view).strides =
                if asked(ffi::PyBUF_STRIDES) { me.strides.as_ptr().cast_mut() } else { null_mut() };
            (*view).suboffsets = null_mut();
            (*view).internal = null_mut();
        }
        Ok(())
    }
}

/// numpy's `frombuffer` and the two dtypes, looked up once (dtype objects, not the scalar
/// types: `frombuffer` then skips converting one, a fifth of its time on a short text).
struct Numpy {
    frombuffer: Py<PyAny>,
    uint32: Py<PyAny>,
    int64: Py<PyAny>,
}

static NUMPY: PyOnceLock<Numpy> = PyOnceLock::new();

fn numpy(py: Python<'_>) -> PyResult<&'static Numpy> {
    NUMPY.get_or_try_init(py, || {
        let np = py.import("numpy").map_err(|e| {
            let err = PyImportError::new_err(
                "ids as arrays need numpy, which could not be imported (pip install numpy); \
                 the list-returning calls work without it",
            );
            err.set_cause(py, Some(e));
            err
        })?;
        let dtype = np.getattr("dtype")?;
        Ok(Numpy {
            frombuffer: np.getattr("frombuffer")?.unbind(),
            uint32: dtype.call1(("uint32",))?.unbind(),
            int64: dtype.call1(("int64",))?.unbind(),
        })
    })
}

fn array<'py, T: Element>(py: Python<'py>, v: Vec<T>) -> PyResult<Bound<'py, PyAny>> {
    let np = numpy(py)?;
    let dtype = match T::KIND {
        Kind::U32 => &np.uint32,
        Kind::I64 => &np.int64,
    };
    let buffer = Bound::new(py, ArrayBuffer::new(v))?;
    np.frombuffer.bind(py).call1((buffer, dtype.bind(py)))
}

/// `ids` as a numpy uint32 array that owns them.
pub(crate) fn ids_array(py: Python<'_>, ids: Vec<u32>) -> PyResult<Bound<'_, PyAny>> {
    array(py, ids)
}

/// A batch as numpy arrays `(ids, offsets)`: uint32 ids end to end, int64 offsets (one more
/// than the batch; input `i` is `ids[offsets[i]:offsets[i + 1]]`).
pub(crate) fn flat_arrays(py: Python<'_>, flat: FlatIds) -> PyResult<Bound<'_, PyTuple>> {
    let offsets: Vec<i64> = flat.offsets.iter().map(|&o| o as i64).collect();
    PyTuple::new(py, [array(py, flat.ids)?, array(py, offsets)?])
}
