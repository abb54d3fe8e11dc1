"""tokenprism: a tokenizer you can see through.

An API that users of Hugging Face ``tokenizers`` recognise, with the same ids and offsets
(bert-base-uncased and other BERT-family ``tokenizer.json`` / ``vocab.txt`` files), plus a
trace of every pipeline stage::

    >>> from tokenprism import Tokenizer
    >>> tok = Tokenizer.from_file("tokenizer.json")       # a bert-base-uncased file
    >>> tok.encode("Héllo, Wörld!").tokens[:6]
    ['[CLS]', 'hello', ',', 'world', '!', '[SEP]']
    >>> [s["name"] for s in tok.trace("Héllo!")["stages"]]
    ['raw', 'clean', 'cjk', 'nfd', 'strip_accents', 'lowercase']
    >>> normalize("e\\u0301", "NFC")
    'é'
"""

from ._core import (
    BpeTokenizer,
    Decoder,
    Encoding,
    Normalizer,
    PreTokenizer,
    Tokenizer,
    TrainedBpe,
    Unigram,
    __version__,
    get_num_threads,
    normalize,
    set_num_threads,
    train_bpe,
)

__all__ = [
    "BpeTokenizer",
    "Decoder",
    "Encoding",
    "Normalizer",
    "PreTokenizer",
    "Tokenizer",
    "TrainedBpe",
    "Unigram",
    "__version__",
    "get_num_threads",
    "normalize",
    "set_num_threads",
    "train_bpe",
]
