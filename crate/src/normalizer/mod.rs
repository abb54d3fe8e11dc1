//! Normalizers: how text is cleaned and folded before it is split into words.

pub mod aligned;
pub mod bert;
pub mod charmap;

pub use aligned::AlignedText;
pub use bert::BertNormalizerConfig;
