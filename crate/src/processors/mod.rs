//! Post-processors: the special tokens a template puts around the encoded text.
