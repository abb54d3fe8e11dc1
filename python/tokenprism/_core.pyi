# Type stub for the compiled module (crate/src/python.rs).
from os import PathLike
from typing import AbstractSet, Any, Callable, Iterable, Literal, Mapping, Sequence, overload

import numpy as np
import numpy.typing as npt

__version__: str

# Ids as a numpy array that owns the Rust buffer (writable; numpy is imported on first use).
_Ids = npt.NDArray[np.uint32]
# A batch as arrays: uint32 ids end to end, int64 offsets (len(batch) + 1); text i is
# ids[offsets[i]:offsets[i + 1]].
_FlatIds = tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]

def normalize(text: str, form: Literal["NFC", "NFD", "NFKC", "NFKD"] | str) -> str:
    """Unicode normalization on Unicode 15.0. Raises ValueError for an unknown form or a
    lone surrogate."""

def set_num_threads(n: int) -> None:
    """Default thread count of the batch calls (0: one per CPU)."""

def get_num_threads() -> int: ...

# The byte-level pre-tokenizer patterns BpeTokenizer matches by hand.
PatternName = Literal["gpt2", "cl100k", "o200k", "qwen", "llama3", "tekken", "deepseek"]

class Encoding:
    """The result of an encode: one entry per token in every list (each list is built
    from the compact result when read, a new list each time)."""

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
    @property
    def words(self) -> list[int | None]:
        """Deprecated alias of word_ids (a DeprecationWarning, as in tokenizers)."""
    @property
    def overflowing(self) -> list[Encoding]:
        """What truncation cut off: windows of the input (stride tokens repeated), each
        post-processed and padded as this Encoding; a pair's combined as tokenizers does."""
    @property
    def n_sequences(self) -> int:
        """2 for a pair (even an empty one), else 1."""
    def token_to_sequence(self, token_index: int) -> int | None: ...
    def token_to_chars(self, token_index: int) -> tuple[int, int] | None: ...
    def token_to_word(self, token_index: int) -> int | None: ...
    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None: ...
    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None: ...
    def word_to_tokens(
        self, word_index: int, sequence_index: int = 0
    ) -> tuple[int, int] | None: ...
    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None: ...
    def __len__(self) -> int: ...

class Normalizer:
    @staticmethod
    def from_str(json: str) -> Normalizer:
        """A normalizer from its tokenizer.json JSON (the reference's `__getstate__`)."""
    def normalize_str(self, text: str) -> str: ...
    def alignments(self, text: str) -> list[tuple[int, int]]:
        """Per normalized char, the input char range it stems from ((0, 0) if inserted first)."""

class Decoder:
    @staticmethod
    def from_str(json: str) -> Decoder:
        """A decoder from its tokenizer.json JSON (the reference's `__getstate__`)."""
    def decode(self, tokens: Sequence[str]) -> str: ...

class PreTokenizer:
    """One pre-tokenizer of a tokenizer.json (its "pre_tokenizer" JSON), on its own."""

    @staticmethod
    def from_str(json: str) -> PreTokenizer: ...
    def pre_tokenize_str(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        """The pieces of `text`, each with its (start, end) char offsets in `text`, as
        tokenizers' `pre_tokenize_str`."""
    @property
    def stages(self) -> list[str]:
        """The stage names the pre-tokenizer reports, one per component."""

class Unigram:
    """A Unigram model alone, from its tokenizer.json object ("type": "Unigram")."""

    @staticmethod
    def from_str(json: str) -> Unigram: ...
    def tokenize(self, text: str) -> list[tuple[int, str, tuple[int, int]]]:
        """(id, value, (start, end)) per token, offsets in UTF-8 bytes, as the reference's
        model.tokenize gives them."""
    @property
    def vocab(self) -> list[tuple[str, float]]: ...
    @property
    def unk_id(self) -> int | None: ...
    @property
    def byte_fallback(self) -> bool: ...
    def get_vocab_size(self) -> int: ...
    def token_to_id(self, token: str) -> int | None: ...
    def id_to_token(self, id: int) -> str | None: ...
    def lattice(self, piece: str, max_nodes: int = 1000) -> dict[str, Any]:
        """How `piece` is split: nodes [{start, end, id, piece, score, unknown, best}] (every
        vocabulary piece at each char, char offsets; an unknown node where no one-char piece
        starts; best: on the Viterbi path), tokens [{start, end, id, token}] (what tokenize
        emits), chars, score (the best path's), and, past `max_nodes`, truncated True with
        shown_chars (the char where the listed nodes stop)."""

class Tokenizer:
    @staticmethod
    def from_file(path: str | PathLike[str], name: str | None = None) -> Tokenizer:
        """A SentencePiece .model (told by its contents or name), a .tiktoken rank file (the
        encoding `name`, else the file's stem: cl100k_base or cl100k ...), a tokenizer.json or
        Mistral tekken.json, or else a vocab.txt with BERT defaults. Special tokens of tekken
        and tiktoken files are added tokens, found in any text."""
    @staticmethod
    def from_sentencepiece_file(path: str | PathLike[str]) -> Tokenizer:
        """A SentencePiece .model file: sentencepiece's ids, pieces and decoding (Unigram, BPE)."""
    @staticmethod
    def from_sentencepiece_bytes(data: bytes) -> Tokenizer: ...
    @staticmethod
    def from_str(json: str) -> Tokenizer: ...
    @staticmethod
    def from_vocab(path: str | PathLike[str]) -> Tokenizer: ...
    def encode(
        self, sequence: str, pair: str | None = None, add_special_tokens: bool = True
    ) -> Encoding: ...
    @overload
    def encode_ids(
        self, sequence: str, add_special_tokens: bool = True, *, as_array: Literal[False] = False
    ) -> list[int]:
        """Just the ids (the fastest path); equal to encode(...).ids."""
    @overload
    def encode_ids(
        self, sequence: str, add_special_tokens: bool = True, *, as_array: Literal[True]
    ) -> _Ids:
        """The ids as a numpy uint32 array (no Python int per id)."""
    @overload
    def encode_batch_ids(
        self,
        inputs: list[str],
        add_special_tokens: bool = True,
        num_threads: int | None = None,
        *,
        as_array: Literal[False] = False,
    ) -> list[list[int]]:
        """encode_ids of each text, on threads without the GIL; equal to the ids of
        encode_batch (padding included)."""
    @overload
    def encode_batch_ids(
        self,
        inputs: list[str],
        add_special_tokens: bool = True,
        num_threads: int | None = None,
        *,
        as_array: Literal[True],
    ) -> _FlatIds:
        """The batch as arrays (ids, offsets)."""
    def encode_batch(
        self,
        inputs: Sequence[str | tuple[str, str]],
        add_special_tokens: bool = True,
        num_threads: int | None = None,
    ) -> list[Encoding]: ...
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str: ...
    def decode_batch(
        self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True
    ) -> list[str]: ...
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
    def truncation(self) -> dict[str, Any] | None:
        """max_length, stride, strategy, direction (as the reference reports them)."""
    @property
    def padding(self) -> dict[str, Any] | None:
        """length, pad_to_multiple_of, pad_id, pad_token, pad_type_id, direction."""
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
    def round_trip_misses(self) -> list[tuple[int, str, str, list[int]]]:
        """The vocabulary entries whose text (the id decoded alone) does not encode back to
        that one id: (id, token, text, the text's ids), in id order."""
    def never_produced(self, texts: list[str]) -> list[int]:
        """The model's vocabulary ids (added tokens left out) that encoding each of `texts`
        (no special tokens added) never yields, in id order."""
    def get_vocab_size(self, with_added_tokens: bool = True) -> int: ...
    def lattice(self, piece: str, max_nodes: int = 1000) -> dict[str, Any]:
        """The Unigram model's lattice of one pre-token (as Unigram.lattice); ValueError for
        other models and for an added token's text (the model never sees it)."""
    def wordpiece_steps(self, piece: str, max_attempts: int = 10000) -> dict[str, Any]:
        """How WordPiece searches one pre-token: attempts [{start, end, piece, id}] (every
        substring looked up, longest first at each start, char offsets; id None for a miss),
        chars, unk, too_long (more chars than max_input_chars_per_word: nothing looked up),
        truncated (past `max_attempts`), unk_id, unk_token. The model's tokens are the
        matches, or the unk token when unk. ValueError for other models and for an added
        token's text."""
    def merge_trace(self, piece: str) -> dict[str, Any]:
        """How BPE merges one pre-token: initial (the symbols' ids), steps [{index, left,
        right, rank, merged, parts}] (rank: the pair's index in the merges list), ids (the
        model's tokens), whole_token (the piece taken whole by ignore_merges, else None),
        tokens (the initial symbols' texts, then each step's merged token's). ValueError for
        other models and for an added token's text."""
    def trace(self, text: str) -> dict[str, Any]:
        """Every stage of one run: stages [{name, text, micros, runs}] (the input, then each
        normalizer stage; runs: the stage's alignment to the input as (first, len, step)
        runs), alignment, pre_tokenizer_stages [{name, pieces, micros}] (one per pre-tokenizer
        component; pieces [{text, offsets}], the last stage's are pre_tokens), pre_tokens,
        tokens, ids, offsets, special_tokens_mask, micros, fast."""

class BpeTokenizer:
    """A byte-level BPE tokenizer (GPT-2, r50k/p50k, cl100k_base, o200k_base, Qwen3, Llama 3,
    DeepSeek V4, ...), shaped like tiktoken.Encoding; ids identical to tiktoken and tokenizers.
    encode_full gives tokenizers' Encoding (offsets, masks, the post-processor's tokens)."""

    @staticmethod
    def from_tiktoken_file(
        path: str | PathLike[str],
        name: str,
        pattern: PatternName | None = None,
        special_tokens: dict[str, int] | None = None,
    ) -> BpeTokenizer:
        """A .tiktoken rank file; `name` (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base,
        o200k_base, o200k_harmony) picks the pattern and special tokens unless given."""
    @staticmethod
    def from_tiktoken_bytes(
        data: bytes,
        name: str,
        pattern: PatternName | None = None,
        special_tokens: dict[str, int] | None = None,
    ) -> BpeTokenizer: ...
    @staticmethod
    def from_file(path: str | PathLike[str], name: str | None = None) -> BpeTokenizer:
        """A Hugging Face tokenizer.json with a byte-level BPE model, a Mistral tekken.json
        (encode_ordinary gives mistral-common's Tekkenizer.encode(text, bos=False, eos=False);
        add_special_tokens puts <s> first), or a .tiktoken rank file (the encoding `name`, else
        the file's stem)."""
    @staticmethod
    def from_str(json: str) -> BpeTokenizer: ...
    @property
    def name(self) -> str: ...
    @property
    def pattern(self) -> PatternName: ...
    @property
    def pat_str(self) -> str | None:
        """The regex the hand-written pre-tokenizer reproduces; None when it reproduces several
        splits in turn (DeepSeek V4)."""
    @property
    def split_regexes(self) -> list[str]:
        """The regexes the pre-tokenizer reproduces, each splitting the pieces of the one before."""
    @property
    def normalizer(self) -> Literal["NFC"] | None:
        """NFC (as tokenizers computes it, Unicode 9.0 results) for Qwen; None otherwise."""
    @property
    def n_vocab(self) -> int: ...
    @property
    def special_tokens(self) -> dict[str, int]: ...
    @property
    def special_tokens_set(self) -> set[str]: ...
    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] | Sequence[str] = ...,
        disallowed_special: Literal["all"] | AbstractSet[str] | Sequence[str] = "all",
        add_special_tokens: bool = False,
    ) -> list[int]:
        """Special tokens in allowed_special become their ids; those in disallowed_special
        ("all": every special token not allowed) raise ValueError; others are plain text.
        add_special_tokens: the tokenizer.json post-processor's tokens around the ids."""
    def encode_full(
        self, text: str, pair: str | None = None, *, add_special_tokens: bool = True
    ) -> Encoding:
        """tokenizers' Tokenizer.encode: ids, tokens, offsets (chars), word ids, type ids,
        masks; every added token in the text is recognized."""
    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] | Sequence[str] = ...,
        disallowed_special: Literal["all"] | AbstractSet[str] | Sequence[str] = "all",
        add_special_tokens: bool = False,
    ) -> _Ids:
        """encode as a numpy uint32 array, as tiktoken's encode_to_numpy."""
    def encode_ordinary(self, text: str) -> list[int]: ...
    def encode_ordinary_to_numpy(self, text: str) -> _Ids: ...
    def encode_batch(
        self,
        texts: list[str],
        *,
        num_threads: int | None = None,
        allowed_special: Literal["all"] | AbstractSet[str] | Sequence[str] = ...,
        disallowed_special: Literal["all"] | AbstractSet[str] | Sequence[str] = "all",
        add_special_tokens: bool = False,
    ) -> list[list[int]]:
        """encode of each text on num_threads threads (default get_num_threads())."""
    def encode_batch_to_numpy(
        self,
        texts: list[str],
        *,
        num_threads: int | None = None,
        allowed_special: Literal["all"] | AbstractSet[str] | Sequence[str] = ...,
        disallowed_special: Literal["all"] | AbstractSet[str] | Sequence[str] = "all",
        add_special_tokens: bool = False,
    ) -> _FlatIds:
        """encode_batch as arrays (ids, offsets)."""
    def encode_ordinary_batch(
        self, texts: list[str], *, num_threads: int | None = None
    ) -> list[list[int]]: ...
    def encode_ordinary_batch_to_numpy(
        self, texts: list[str], *, num_threads: int | None = None
    ) -> _FlatIds: ...
    def decode(
        self, tokens: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> str: ...
    def decode_bytes(self, tokens: Sequence[int]) -> bytes: ...
    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]: ...
    def decode_single_token_bytes(self, token: int) -> bytes: ...
    def decode_pieces(self, tokens: Sequence[int]) -> list[str]:
        """The text each token completes ("" for a token ending inside a character); the
        pieces join to decode(tokens)."""
    def token_to_id(self, token: str | bytes) -> int | None: ...
    def pre_tokenize_str(self, text: str) -> list[str]: ...
    def trace_piece(self, piece: str | bytes) -> dict[str, Any]:
        """How one pre-token becomes ids: bytes, initial (one id per byte), steps [{index,
        left, right, rank, merged, parts}], whole_token, ids."""
    def trace(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] | None = None,
        disallowed_special: Literal["all"] | AbstractSet[str] | None = None,
    ) -> dict[str, Any]:
        """encode laid open: segments (special cuts; normalized text; pre-tokens with start,
        end, text, ids, whole), tokens (id, bytes, text, partial, special), times (us)."""
    @overload
    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        add_generation_prompt: bool = True,
        template: str | None = None,
        tokenize: Literal[True] = True,
    ) -> list[int]: ...
    @overload
    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        add_generation_prompt: bool = True,
        template: str | None = None,
        tokenize: Literal[False],
    ) -> str: ...
    def chat_parts(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        add_generation_prompt: bool = True,
        template: str | None = None,
    ) -> list[dict[str, Any]]:
        """The chat piece by piece: [{kind: "marker" | "text", text, ids, message}]."""

class TrainedBpe:
    """The result of train_bpe: merges in order with their counts, the vocabulary, and the
    textbook chapter's tokenize."""

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merge rules in training order (byte-level: spelled with GPT-2's byte chars)."""
    @property
    def counts(self) -> list[int]:
        """How often each merged pair occurred when it was chosen."""
    @property
    def vocab(self) -> dict[str, int]: ...
    @property
    def initial_vocab_size(self) -> int: ...
    @property
    def byte_level(self) -> bool: ...
    @property
    def cancelled(self) -> bool:
        """True if the progress callback stopped training early."""
    def tokenize(self, word: str) -> list[str]:
        """The chapter's tokenize(word, merges): chars plus "_" (byte-level: bytes), then
        every merge in training order."""
    def to_tokenizer_json(self) -> str:
        """A Hugging Face tokenizer.json (GPT-2 layout); byte-level results only."""
    def tokenizer(self) -> BpeTokenizer:
        """A byte-level result as a BpeTokenizer."""
    def __len__(self) -> int: ...

def train_bpe(
    texts: str | Iterable[str],
    vocab_size: int,
    *,
    byte_level: bool = False,
    min_frequency: int = 0,
    progress: Callable[[int, tuple[str, str], int], object] | None = None,
) -> TrainedBpe:
    """Trains BPE until the vocabulary has vocab_size symbols. byte_level=False is the
    textbook chapter's algorithm (same merges, same tie-breaking); True starts from the 256
    bytes with GPT-2's pre-tokenizer. progress(done, (left, right), count) runs after each
    merge; returning False or "stop" ends training (cancelled=True); its exceptions propagate."""
