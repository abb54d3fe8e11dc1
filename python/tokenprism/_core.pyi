# Type stub for the compiled module (crate/src/python.rs).
from os import PathLike
from typing import Any, Literal, Sequence

__version__: str

def normalize(text: str, form: Literal["NFC", "NFD", "NFKC", "NFKD"] | str) -> str:
    """Unicode normalization on Unicode 15.0. Raises ValueError for an unknown form or a
    lone surrogate."""

def set_num_threads(n: int) -> None:
    """Default thread count for encode_batch (0: one per CPU)."""

def get_num_threads() -> int: ...

class Encoding:
    """The result of an encode: one entry per token in every list."""

    @property
    def ids(self) -> list[int]: ...
    @property
    def type_ids(self) -> list[int]: ...
    @property
    def tokens(self) -> list[str]: ...
    @property
    def offsets(self) -> list[tuple[int, int]]:
        """(start, end) in characters of the input; (0, 0) for template special tokens."""
    @property
    def attention_mask(self) -> list[int]: ...
    @property
    def special_tokens_mask(self) -> list[int]: ...
    @property
    def word_ids(self) -> list[int | None]: ...
    @property
    def sequence_ids(self) -> list[int | None]: ...
    def __len__(self) -> int: ...

class Normalizer:
    def normalize_str(self, text: str) -> str: ...

class Tokenizer:
    @staticmethod
    def from_file(path: str | PathLike[str]) -> Tokenizer:
        """A tokenizer.json, or (when the file is not JSON) a vocab.txt with BERT defaults."""
    @staticmethod
    def from_str(json: str) -> Tokenizer: ...
    @staticmethod
    def from_vocab(path: str | PathLike[str]) -> Tokenizer: ...
    def encode(self, sequence: str, pair: str | None = None, add_special_tokens: bool = True) -> Encoding: ...
    def encode_ids(self, sequence: str, add_special_tokens: bool = True) -> list[int]:
        """Just the ids (the fastest path); equal to encode(...).ids."""
    def encode_batch(
        self,
        inputs: Sequence[str | tuple[str, str]],
        add_special_tokens: bool = True,
        num_threads: int | None = None,
    ) -> list[Encoding]: ...
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str: ...
    def decode_batch(self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True) -> list[str]: ...
    def no_truncation(self) -> None: ...
    def no_padding(self) -> None: ...
    def enable_truncation(
        self,
        max_length: int,
        stride: int = 0,
        strategy: Literal["longest_first", "only_first", "only_second"] = "longest_first",
        direction: Literal["left", "right"] = "right",
    ) -> None: ...
    def enable_padding(
        self,
        direction: Literal["left", "right"] = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: int | None = None,
        pad_to_multiple_of: int | None = None,
    ) -> None: ...
    @property
    def truncation(self) -> tuple[int, int, str, str] | None: ...
    @property
    def padding(self) -> tuple[int | None, str, int, str] | None: ...
    @property
    def normalizer(self) -> Normalizer | None: ...
    @property
    def fast_paths(self) -> dict[str, bool]: ...
    def set_fast_paths(
        self,
        simd: bool | None = None,
        page_cache: bool | None = None,
        lazy_output: bool | None = None,
        fused: bool | None = None,
    ) -> None:
        """Switch fast paths on or off; results never change, only speed."""
    def id_to_token(self, id: int) -> str | None: ...
    def token_to_id(self, token: str) -> int | None: ...
    def get_vocab_size(self, with_added_tokens: bool = True) -> int: ...
    def trace(self, text: str) -> dict[str, Any]:
        """Every stage of one run: stages [{name, text, micros}], alignment, pre_tokens
        [{text, offsets}], tokens, ids, offsets, special_tokens_mask, micros."""
