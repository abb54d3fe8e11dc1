//! Tables written by the generators in `crate/tools/` from the Unicode data files; never edit
//! them by hand (tests check that each is its generator's output).

#[rustfmt::skip]
pub mod bert_tables;
#[rustfmt::skip]
pub mod bpe_classes;
#[rustfmt::skip]
pub mod forms_tables;
#[cfg(feature = "general")]
#[rustfmt::skip]
pub mod scripts_tables;
#[rustfmt::skip]
pub mod word_tables;
