//! Truncation as the reference does it: the strategies, the stride, the room the template's
//! special tokens take.

use serde::Serialize;

use super::{Encoding, Tokenizer};
use crate::error::{Error, Result};
use crate::processors;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Direction {
    Left,
    Right,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TruncationStrategy {
    LongestFirst,
    OnlyFirst,
    OnlySecond,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    pub max_length: usize,
    pub stride: usize,
    pub strategy: TruncationStrategy,
    pub direction: Direction,
}

impl Truncation {
    pub fn new(
        max_length: usize,
        stride: usize,
        strategy: TruncationStrategy,
        direction: Direction,
    ) -> Result<Self> {
        Ok(Truncation { max_length, stride, strategy, direction })
    }
}

impl Tokenizer {
    pub(crate) fn truncate(
        &self,
        a: &mut Encoding,
        b: Option<&mut Encoding>,
        add_special_tokens: bool,
    ) -> Result<()> {
        let Some(tr) = &self.truncation else { return Ok(()) };
        let n_added = if add_special_tokens {
            processors::added_tokens_count(self.post_processor.as_ref(), b.is_some())
        } else {
            0
        };
        // The reference subtracts without a check; when the template adds more tokens than
        // max_length allows, its release build wraps around and so never truncates.
        let Some(max_length) = tr.max_length.checked_sub(n_added) else { return Ok(()) };
        let (stride, dir) = (tr.stride, tr.direction);
        let total = a.len() + b.as_ref().map_or(0, |b| b.len());
        if max_length == 0 {
            a.truncate(0, stride, dir)?;
            if let Some(b) = b {
                b.truncate(0, stride, dir)?;
            }
            return Ok(());
        }
        if total <= max_length {
            return Ok(());
        }
        let to_remove = total - max_length;
        match tr.strategy {
            TruncationStrategy::LongestFirst => match b {
                Some(b) => {
                    let (mut n1, mut n2) = (a.len(), b.len());
                    let swap = n1 > n2;
                    if swap {
                        std::mem::swap(&mut n1, &mut n2);
                    }
                    n2 = if n1 > max_length { n1 } else { n1.max(max_length - n1) };
                    if n1 + n2 > max_length {
                        n1 = max_length / 2;
                        n2 = n1 + max_length % 2;
                    }
                    if swap {
                        std::mem::swap(&mut n1, &mut n2);
                    }
                    a.truncate(n1, stride, dir)?;
                    b.truncate(n2, stride, dir)?;
                }
                None => a.truncate(total - to_remove, stride, dir)?,
            },
            TruncationStrategy::OnlyFirst | TruncationStrategy::OnlySecond => {
                let target = if tr.strategy == TruncationStrategy::OnlyFirst {
                    a
                } else {
                    b.ok_or_else(|| Error::Input("truncation error: second sequence not provided".into()))?
                };
                let len = target.len();
                if len > to_remove {
                    target.truncate(len - to_remove, stride, dir)?;
                } else {
                    return Err(Error::Input(
                        "truncation error: sequence to truncate too short to respect the provided max_length"
                            .into(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Sets truncation as the reference's `enable_truncation` does, refusing a stride larger
    /// than the room left for text in a single sequence.
    pub fn set_truncation(&mut self, t: Option<Truncation>) -> Result<()> {
        if let Some(tr) = &t {
            let n = processors::added_tokens_count(self.post_processor.as_ref(), false);
            if let Some(effective) = tr.max_length.checked_sub(n) {
                if effective < tr.stride {
                    return Err(Error::Invalid(format!(
                        "tokenizer stride set to {}, which is greater than or equal to its effective max length of {} \
                         (= {} original max length - {} added special tokens)",
                        tr.stride, effective, tr.max_length, n
                    )));
                }
            }
        }
        self.truncation = t;
        Ok(())
    }
}
