//! Padding: to a fixed length or the batch's longest, to a multiple, on either side.

use std::sync::Arc;

use super::Direction;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaddingStrategy {
    BatchLongest,
    Fixed(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Padding {
    pub strategy: PaddingStrategy,
    pub direction: Direction,
    pub pad_to_multiple_of: Option<usize>,
    pub pad_id: u32,
    pub pad_type_id: u32,
    pub pad_token: Arc<str>,
}

/// `n` rounded up to a multiple of `multiple` (when there is one).
pub(crate) fn round_up(n: usize, multiple: Option<usize>) -> usize {
    match multiple {
        Some(m) if m > 0 && !n.is_multiple_of(m) => n + m - n % m,
        _ => n,
    }
}
