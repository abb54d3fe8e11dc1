"""mistral-common's Tekkenizer as a process, the reference of the Tekken tests.

    <cache>/venv-mistral-common/bin/python tests/tekken_oracle.py FILE

mistral-common 1.13.1 lives in a venv of its own (scripts/data/bpe_data.sh makes it), so the
tests talk to it through this script: one JSON request per line on stdin, one JSON answer per
line on stdout.

    {"op": "info"}                     -> {"version", "n_words", "num_special_tokens", "bos",
                                           "eos", "specials": [token_str by id]}
    {"op": "encode", "text": T}        -> {"ids": encode(T, bos=False, eos=False),
                                           "bos_eos": encode(T, bos=True, eos=True),
                                           "ignore": decode(bos_eos), "keep": decode(bos_eos,
                                           special_token_policy=KEEP)}
    {"op": "decode", "ids": I}         -> {"ignore": decode(I), "keep": decode(I, KEEP)}
"""

from __future__ import annotations

import json
import sys

from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
from mistral_common.tokens.tokenizers.tekken import Tekkenizer


def main() -> None:
    import mistral_common

    tok = Tekkenizer.from_file(sys.argv[1])
    for line in sys.stdin:
        req = json.loads(line)
        op = req["op"]
        if op == "info":
            out = {
                "version": mistral_common.__version__,
                "n_words": tok.n_words,
                "num_special_tokens": tok.num_special_tokens,
                "bos": tok.bos_id,
                "eos": tok.eos_id,
                "specials": [tok.id_to_piece(i) for i in range(tok.num_special_tokens)],
            }
        elif op == "encode":
            text = req["text"]
            both = tok.encode(text, bos=True, eos=True)
            out = {
                "ids": tok.encode(text, bos=False, eos=False),
                "bos_eos": both,
                "ignore": tok.decode(both),
                "keep": tok.decode(both, special_token_policy=SpecialTokenPolicy.KEEP),
            }
        elif op == "decode":
            ids = req["ids"]
            out = {
                "ignore": tok.decode(ids),
                "keep": tok.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP),
            }
        else:
            out = {"error": f"unknown op {op!r}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
