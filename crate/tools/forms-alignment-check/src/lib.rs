//! tokenprism's normalization forms, compiled on their own so that the test in
//! `tests/against_reference.rs` can run them next to `unicode-normalization-alignments`.
//! The files are the real ones (not copies): `forms.rs` finds its tables as
//! `super::generated::forms_tables`.

#[path = "../../../src/unicode/forms.rs"]
pub mod forms;
#[path = "../../../src/unicode/generated/mod.rs"]
pub mod generated;
// The unit tests' random source, which forms.rs's own tests use (not all of it).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../../src/testing.rs"]
mod testing;
