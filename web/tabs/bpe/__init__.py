"""The BPE tab: byte-level BPE tokenizers, their merges and chat templates."""
