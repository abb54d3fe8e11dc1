"""Bad tokenizer files and bad input: a Python exception (ValueError / OSError) whose message says
what is wrong; never a panic, never an abort. Each case also runs in a child process, so a crash
of the extension (abort, segfault) shows up as a failure instead of killing the test run.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import textwrap

import pytest

from paths import bert_json, bert_vocab, reference


def bert() -> dict:
    return json.loads(bert_json().read_text(encoding="utf-8"))


def edit(f) -> str:
    c = copy.deepcopy(bert())
    f(c)
    return json.dumps(c)


def set_in(path: list, value):
    def f(c):
        d = c
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value

    return f


# (name, json text, exception type, regex the message must match)
JSON_CASES = [
    (
        "malformed JSON",
        lambda: '{"version": "1.0", "model": {',
        ValueError,
        r"json|malformed|pars|EOF",
    ),
    (
        "truncated file",
        lambda: bert_json().read_text(encoding="utf-8")[:5000],
        ValueError,
        r"json|malformed|pars|EOF",
    ),
    ("not an object", lambda: "[1, 2, 3]", ValueError, r"object|malformed"),
    ("empty string", lambda: "", ValueError, r"json|malformed|pars|EOF|empty"),
    (
        "vocab not an object",
        lambda: edit(lambda c: c["model"].__setitem__("vocab", list(c["model"]["vocab"]))),
        ValueError,
        r"vocab",
    ),
    (
        "vocab id a string",
        lambda: edit(lambda c: c["model"]["vocab"].__setitem__("hello", "7592")),
        ValueError,
        r"hello|vocab.*(id|integer)|(id|integer).*vocab",
    ),
    (
        "vocab id negative",
        lambda: edit(lambda c: c["model"]["vocab"].__setitem__("hello", -1)),
        ValueError,
        r"hello|vocab",
    ),
    (
        "lowercase a string",
        lambda: edit(set_in(["normalizer", "lowercase"], "true")),
        ValueError,
        r"lowercase",
    ),
    (
        "max_input_chars_per_word a string",
        lambda: edit(set_in(["model", "max_input_chars_per_word"], "100")),
        ValueError,
        r"max_input_chars_per_word",
    ),
    (
        "missing [UNK]",
        lambda: edit(lambda c: c["model"]["vocab"].pop("[UNK]")),
        ValueError,
        r"\[UNK\]",
    ),
    ("empty vocab", lambda: edit(set_in(["model", "vocab"], {})), ValueError, r"empty|vocab"),
    ("missing model", lambda: edit(lambda c: c.pop("model")), ValueError, r"model"),
    (
        "normalizer of no known type",
        lambda: edit(set_in(["normalizer"], {"type": "Uppercase"})),
        ValueError,
        r"(?=.*normalizer)(?=.*Uppercase)",
    ),
    (
        "normalizer Replace with a bad regex",
        lambda: edit(
            set_in(["normalizer"], {"type": "Replace", "pattern": {"Regex": "("}, "content": "b"})
        ),
        ValueError,
        r"normalizer\.pattern",
    ),
    (
        "model of no known type",
        lambda: edit(set_in(["model"], {"type": "Bigram", "vocab": [["<unk>", 0.0]]})),
        ValueError,
        r"(?=.*model)(?=.*Bigram)",
    ),
    (
        "Unigram unk_id outside the vocabulary",
        lambda: edit(
            set_in(["model"], {"type": "Unigram", "unk_id": 3, "vocab": [["<unk>", 0.0]]})
        ),
        ValueError,
        r"(?=.*model)(?=.*unk_id)",
    ),
    (
        "pre_tokenizer Metaspace with a two-char replacement",
        lambda: edit(
            set_in(
                ["pre_tokenizer"],
                {
                    "type": "Metaspace",
                    "replacement": "__",
                    "prepend_scheme": "always",
                    "split": True,
                },
            )
        ),
        ValueError,
        r"(?=.*pre_?tokenizer)(?=.*replacement)",
    ),
    (
        "post_processor ByteLevel without trim_offsets",
        lambda: edit(
            set_in(
                ["post_processor"],
                {"type": "ByteLevel", "add_prefix_space": True, "use_regex": True},
            )
        ),
        ValueError,
        r"post_processor\.trim_offsets",
    ),
    (
        "post_processor of no known type",
        lambda: edit(set_in(["post_processor"], {"type": "Trim", "trim_offsets": True})),
        ValueError,
        r"(?=.*post_?processor)(?=.*Trim)",
    ),
    (
        "decoder of no known type",
        lambda: edit(set_in(["decoder"], {"type": "BPE", "suffix": "</w>"})),
        ValueError,
        r"(?=.*decoder)(?=.*BPE)",
    ),
    (
        "template with unknown special token",
        lambda: edit(lambda c: c["post_processor"]["special_tokens"].pop("[SEP]")),
        ValueError,
        r"\[SEP\]",
    ),
    (
        "truncation strategy unknown",
        lambda: edit(
            set_in(["truncation"], {"max_length": 10, "strategy": "Sideways", "stride": 0})
        ),
        ValueError,
        r"Sideways|strategy|truncation",
    ),
]


@pytest.mark.parametrize("name,make,exc,pattern", JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_bad_json(name, make, exc, pattern):
    import tokenprism

    text = make()
    with pytest.raises(exc) as info:
        t = tokenprism.Tokenizer.from_str(text)
        t.encode("a \u2603 b")  # a loader that defers the check must fail here at the latest
    assert type(info.value).__name__ != "PanicException"
    msg = str(info.value)
    assert re.search(pattern, msg, re.I | re.S), (
        f"{name}: message doesn't say what is wrong: {msg!r}"
    )


@pytest.mark.parametrize("name,make,exc,pattern", JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_bad_json_file(tmp_path, name, make, exc, pattern):
    """The same through from_file (a .json file that fails must not be read as a vocab.txt)."""
    import tokenprism

    p = tmp_path / "tokenizer.json"
    p.write_text(make(), encoding="utf-8")
    with pytest.raises(exc) as info:
        t = tokenprism.Tokenizer.from_file(str(p))
        t.encode("a \u2603 b")
    msg = str(info.value).replace(str(p), "<path>")  # the path holds the test's name: ignore it
    assert re.search(pattern, msg, re.I | re.S), (
        f"{name}: message doesn't say what is wrong: {msg!r}"
    )


def test_nonexistent_path(tmp_path):
    import tokenprism

    p = tmp_path / "no" / "such" / "tokenizer.json"
    for load in (tokenprism.Tokenizer.from_file, tokenprism.Tokenizer.from_vocab):
        with pytest.raises(OSError) as info:
            load(str(p))
        assert str(p) in str(info.value), f"the message should name the path: {info.value}"


def test_directory_path(tmp_path):
    import tokenprism

    with pytest.raises((OSError, ValueError)):
        tokenprism.Tokenizer.from_file(str(tmp_path))


@pytest.mark.parametrize(
    "content",
    [b'\xff\xfe{"version": "1.0"}', b"[PAD]\n[UNK]\ncaf\xe9\n", b'{"model": "\xc3\x28"}'],
    ids=["utf16-bom-json", "latin1-vocab", "bad-utf8-in-json"],
)
@pytest.mark.parametrize("loader", ["from_file", "from_vocab"])
def test_not_utf8(tmp_path, content, loader):
    import tokenprism

    p = tmp_path / "tokenizer.json"
    p.write_bytes(content)
    with pytest.raises((ValueError, OSError)) as info:
        getattr(tokenprism.Tokenizer, loader)(str(p))
    msg = str(info.value).replace(str(p), "<path>")
    assert re.search(r"utf-?8", msg, re.I), msg


def test_vocab_txt_without_unk(tmp_path):
    import tokenprism

    lines = [w for w in bert_vocab().read_text(encoding="utf-8").splitlines() if w != "[UNK]"]
    p = tmp_path / "vocab.txt"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        t = tokenprism.Tokenizer.from_vocab(str(p))
        t.encode("a \u2603 b")
    assert "[UNK]" in str(info.value), str(info.value)


def test_empty_vocab_txt(tmp_path):
    import tokenprism

    p = tmp_path / "vocab.txt"
    p.write_text("", encoding="utf-8")
    for load in (tokenprism.Tokenizer.from_vocab, tokenprism.Tokenizer.from_file):
        with pytest.raises(ValueError) as info:
            t = load(str(p))
            t.encode("hello")
        msg = str(info.value).replace(str(p), "<path>")
        assert re.search(r"empty|vocab", msg, re.I), msg


SURROGATE_CALLS = [
    ("encode", lambda t: t.encode("a\ud800b")),
    ("encode pair", lambda t: t.encode("a", "b\udfff")),
    ("encode_batch", lambda t: t.encode_batch(["ok", "x\udc00"])),
    ("encode_batch pair", lambda t: t.encode_batch([("ok", "\ud83d")])),
    ("normalize_str", lambda t: t.normalizer.normalize_str("\ud800")),
    ("trace", lambda t: t.trace("abc\udbff")),
]


@pytest.mark.parametrize("name,call", SURROGATE_CALLS, ids=[c[0] for c in SURROGATE_CALLS])
def test_lone_surrogate(name, call):
    import tokenprism

    t = tokenprism.Tokenizer.from_file(str(bert_json()))
    with pytest.raises(ValueError, match=r"(?i)surrogate"):
        call(t)
    # and the tokenizer is still usable afterwards
    ref = reference().Tokenizer.from_file(str(bert_json()))
    assert t.encode("still works").ids == ref.encode("still works").ids


def test_no_crash_in_child_process(tmp_path):
    """Every bad case again in a fresh interpreter: it must exit normally (no abort/segfault),
    and every case must raise a Python exception there too."""
    cases = {name: make() for name, make, _, _ in JSON_CASES}
    (tmp_path / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes(b"[PAD]\n[UNK]\ncaf\xe9\n")
    script = textwrap.dedent(f"""
        import json, sys, tokenprism
        T = tokenprism.Tokenizer
        cases = json.load(open({str(tmp_path / "cases.json")!r}, encoding="utf-8"))
        calls = [(n, (lambda s=s: T.from_str(s).encode("a \\u2603 b"))) for n, s in cases.items()]
        calls += [
            ("nonexistent", lambda: T.from_file({str(tmp_path / "nope.json")!r})),
            ("latin1 from_file", lambda: T.from_file({str(tmp_path / "latin1.txt")!r})),
            ("latin1 from_vocab", lambda: T.from_vocab({str(tmp_path / "latin1.txt")!r})),
            ("surrogate", lambda: T.from_file({str(bert_json())!r}).encode("\\ud800")),
            ("surrogate batch", lambda: T.from_file({str(bert_json())!r}).encode_batch(["\\udfff"])),
        ]
        bad = 0
        for name, call in calls:
            try:
                call()
                print("NO EXCEPTION", name); bad += 1
            except (ValueError, OSError) as e:
                print("ok", name, type(e).__name__)
            except BaseException as e:
                print("WRONG EXCEPTION", name, type(e).__name__, e); bad += 1
        print("done", len(calls))
        sys.exit(3 if bad else 0)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"child exited with {r.returncode}:\n{out}"
    assert "done" in r.stdout, out
