//! Decoders: ids' tokens back to text.
