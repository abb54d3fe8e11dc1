//! The wasm-bindgen binding: a thin shell over [`crate::Tokenizer`] for the browser.
//!
//! Like the pyo3 binding, it exposes one coarse call, `trace`, so the page crosses the JS
//! boundary once per input change. The trace travels as a JSON string: the page's Python
//! (Pyodide) turns it into the same dict the native module returns, so the UI code runs
//! unchanged on both builds.

#[cfg(feature = "wasm-bpe")]
mod bpe;
mod tokenizer;
#[cfg(feature = "wasm-bpe")]
mod train;

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `performance.now()` in milliseconds; `std::time::Instant` panics on
    /// wasm32-unknown-unknown, so `crate::clock` times stages with this instead.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub fn performance_now() -> f64;
}

/// The one input on which [`tokenizer::WasmTokenizer::trace`] panics, for the page's crash-recovery test:
/// NUL-delimited, so no one types or pastes it by accident (the page sends it as is).
pub const PANIC_TEST_INPUT: &str = "\u{0}tokenprism: panic test\u{0}";

thread_local! {
    /// The input buffer: text the page wrote into wasm memory itself (see [`input_buffer`]).
    static INPUT: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Makes the input buffer at least `capacity` bytes long and returns its address in wasm
/// memory, for the page to write UTF-8 into with `TextEncoder.encodeInto`
/// (web/shell/wasm-text.js); the `...Input(start, len)` methods then read `len` bytes from `start`.
///
/// Why: wasm-bindgen passes a `&str` by copying it in a JavaScript loop, one `charCodeAt` per
/// char, until the first non-ASCII char. That loop runs at ~100-150 MB/s in V8, slower than
/// the normalizer it feeds; `encodeInto` copies ASCII at GB/s. The address stays valid until
/// the next call with a larger capacity (which may move the buffer and grow the memory).
#[wasm_bindgen(js_name = inputBuffer)]
pub fn input_buffer(capacity: usize) -> *mut u8 {
    INPUT.with(|b| {
        let mut b = b.borrow_mut();
        if b.len() < capacity {
            b.resize(capacity, 0);
        }
        b.as_mut_ptr()
    })
}

/// Runs `f` on `len` bytes of the input buffer from `start`, as text (a range past the buffer
/// is an error).
///
/// The caller's contract: those bytes were written by `TextEncoder.encodeInto`, so they are
/// UTF-8 (it writes whole chars only, and a lone surrogate as U+FFFD).
pub(crate) fn with_input<R>(start: usize, len: usize, f: impl FnOnce(&str) -> R) -> Result<R, JsError> {
    INPUT.with(|b| {
        let b = b.borrow();
        let bytes = b
            .get(start..start.saturating_add(len))
            .ok_or_else(|| JsError::new("input range past the input buffer"))?;
        // SAFETY: the bytes are UTF-8 by the caller's contract above. It is the contract of
        // every `&str` parameter of this binding: wasm-bindgen's glue writes the string with
        // encodeInto and its ABI transmutes the bytes to `str` unchecked (convert/slices.rs,
        // `RefFromWasmAbi for str`); JavaScript can write any byte of the module's memory, so
        // the module trusts its glue either way. Checking here would cost 8% of o200k's encode
        // on Russian in V8 (`from_utf8` on every call).
        let text = unsafe { std::str::from_utf8_unchecked(bytes) };
        Ok(f(text))
    })
}

/// Runs `f` on `len` bytes of the input buffer from `start`, as bytes (for input that may not
/// be UTF-8: a file's bytes, which the callee checks).
pub(crate) fn with_input_bytes<R>(
    start: usize,
    len: usize,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<R, JsError> {
    INPUT.with(|b| {
        let b = b.borrow();
        let bytes = b
            .get(start..start.saturating_add(len))
            .ok_or_else(|| JsError::new("input range past the input buffer"))?;
        Ok(f(bytes))
    })
}

pub(crate) fn to_js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// `value` as compact JSON, with floats rounded to three decimals.
///
/// Why: the floats the page receives are timings in microseconds, and serde_json's own float
/// writer (shortest round trip) brings 17 KB of tables into the module.
pub(crate) fn to_json(value: &impl serde::Serialize) -> Result<String, JsError> {
    let mut out = Vec::with_capacity(256);
    value
        .serialize(&mut serde_json::Serializer::with_formatter(&mut out, ThreeDecimals))
        .map_err(to_js_error)?;
    String::from_utf8(out).map_err(to_js_error)
}

/// serde_json's compact format, but floats written as `-?\d+\.\d{3}`.
struct ThreeDecimals;

impl serde_json::ser::Formatter for ThreeDecimals {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, value: f64) -> std::io::Result<()> {
        // serde_json writes non-finite floats as null before asking the formatter; the cast
        // saturates far beyond any timing.
        let thousandths = (value * 1000.0).round() as i64;
        if thousandths < 0 {
            w.write_all(b"-")?;
        }
        let t = thousandths.unsigned_abs();
        self.write_u64(w, t / 1000)?;
        let digit = |d: u64| b'0' + (t / d % 10) as u8;
        w.write_all(&[b'.', digit(100), digit(10), digit(1)])
    }

    fn write_f32<W: ?Sized + std::io::Write>(&mut self, w: &mut W, value: f32) -> std::io::Result<()> {
        self.write_f64(w, value.into())
    }
}

#[cfg(test)]
mod tests {
    use super::to_json;

    #[test]
    fn floats_are_rounded_to_three_decimals() {
        let floats = (12.3456_f64, -0.5_f64, -0.0004_f64, 2.0_f32, 1e-9_f64, f64::NAN);
        assert_eq!(to_json(&floats).ok().as_deref(), Some("[12.346,-0.500,0.000,2.000,0.000,null]"));
        // Everything else is serde_json's compact output.
        let other = serde_json::json!({"id": 7, "name": "a\"b", "ok": true, "none": null});
        assert_eq!(to_json(&other).ok(), Some(other.to_string()));
    }
}
