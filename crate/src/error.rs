//! One error type for everything that can go wrong when loading or running a tokenizer.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The tokenizer file is not valid JSON, or a field has the wrong type.
    Json(String),
    /// The file asks for a component or setting this crate does not implement.
    Unsupported(String),
    /// The file is well-formed but inconsistent (e.g. the unk token is not in the vocab).
    Invalid(String),
    /// Bad input to an encode or decode call.
    Input(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Json(m) => write!(f, "malformed tokenizer file: {m}"),
            Error::Unsupported(m) => write!(f, "unsupported: {m}"),
            Error::Invalid(m) => write!(f, "invalid tokenizer: {m}"),
            Error::Input(m) => write!(f, "invalid input: {m}"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
