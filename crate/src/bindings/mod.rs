//! The two bindings: thin layers of argument conversion and error mapping over the core.

#[cfg(feature = "python")]
mod python;
#[cfg(feature = "wasm")]
pub mod wasm;
