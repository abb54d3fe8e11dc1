//! tokenprism's normalization forms, compiled on their own so that the test in
//! `tests/against_reference.rs` can run them next to `unicode-normalization-alignments`.
//! The files are the real ones (not copies): `forms.rs` finds its tables as `super::forms_tables`.

#[path = "../../../src/unicode/forms.rs"]
pub mod forms;
#[rustfmt::skip]
#[path = "../../../src/unicode/forms_tables.rs"]
pub mod forms_tables;
