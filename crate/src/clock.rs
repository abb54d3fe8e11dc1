//! A monotonic clock in microseconds for stage timings, on native targets and in the browser
//! (where `std::time::Instant` is unavailable on wasm32-unknown-unknown).

#[cfg(not(target_arch = "wasm32"))]
pub fn now_micros() -> f64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e6
}

#[cfg(all(target_arch = "wasm32", feature = "wasm"))]
pub fn now_micros() -> f64 {
    crate::bindings::wasm::performance_now() * 1000.0
}

#[cfg(all(target_arch = "wasm32", not(feature = "wasm")))]
pub fn now_micros() -> f64 {
    0.0
}
