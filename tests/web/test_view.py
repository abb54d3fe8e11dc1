"""The tokenize tab's view (web/tabs/tokenize/) and the shared shell/chars.py and shell/link.py
under CPython, fed by the native module's real traces: the page's view logic
(diffs, badges, the stepper, tokens over the text, share links) without a browser. Expected
texts come from `tokenizers` 0.23.3 run here, never from our own output."""

from __future__ import annotations

import base64
import json
import unicodedata
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parity import reference_stages
from shell import chars, link, models
from tabs.tokenize import gallery, view
from web_env import DIST

BERT_JSON = DIST / "data" / "bert-base-uncased" / "tokenizer.json"
EXAMPLE = "Héllo, Wörld! 東京"
INPUTS = [
    EXAMPLE,
    "Crème brûlée,\tnaïve\nfaçade",
    "zero\u200bwidth soft\u00adhyphen \x07bell",
    "İstanbul ΟΔΥΣΣΕΥΣ Ἀθῆναι",
    "I ❤️ tokenizers 👩🏽‍💻",
    "def f(x):\n\treturn x ** 2  # square",
    gallery.RUSSIAN,
    "",
]


@pytest.fixture(scope="module")
def bert():
    import tokenprism

    assert BERT_JSON.exists(), "dist/ is missing: run ./build.sh build"
    return tokenprism.Tokenizer.from_file(str(BERT_JSON))


def tags(node):
    for n in node.walk():
        yield n.tag


# ------------------------------------------------------------------------------------ diffs


def test_diff_spans_marks_what_changed():
    assert chars.diff_spans("abc", "abc") == [("abc", False)]
    assert chars.diff_spans("Héllo", "Hello") == [("H", False), ("e", True), ("llo", False)]
    assert chars.diff_spans("東京", " 東  京 ") == [
        (" ", True),
        ("東", False),
        ("  ", True),
        ("京", False),
        (" ", True),
    ]
    assert chars.diff_spans("abc", "") == []


def rebuild(spans):
    """(before, after) as the spans describe them."""
    before = "".join(s.text if s.kind == "equal" else s.old for s in spans)
    after = "".join(s.text for s in spans)
    return before, after


@given(st.text(max_size=40), st.text(max_size=40))
def test_diff_without_alignment_rebuilds_both_texts(before, after):
    spans = chars.diff_stages(before, after)
    assert rebuild(spans) == (before, after)
    assert all(s.text or s.old for s in spans)
    pos = 0
    for s in spans:
        assert s.start == pos
        pos += len(s.text)


@pytest.mark.parametrize("text", INPUTS)
def test_diff_by_alignment_on_real_traces(bert, text):
    trace = bert.trace(text)
    expected = reference_stages(text)
    stages = trace["stages"]
    assert [s["name"] for s in stages] == list(expected)
    for prev, cur in zip(stages, stages[1:]):
        assert cur["text"] == expected[cur["name"]], cur["name"]
        orig = view.stage_orig(cur)
        assert len(orig) == len(cur["text"])
        spans = chars.diff_stages(prev["text"], cur["text"], view.stage_orig(prev), orig)
        assert rebuild(spans) == (prev["text"], cur["text"]), cur["name"]
        if prev["text"] == cur["text"]:
            assert all(s.kind == "equal" for s in spans)


def test_diff_kinds_on_real_stages(bert):
    stages = {s["name"]: s for s in bert.trace("Héllo\u200b 東京")["stages"]}

    def kinds(a, b):
        spans = chars.diff_stages(
            stages[a]["text"],
            stages[b]["text"],
            view.stage_orig(stages[a]),
            view.stage_orig(stages[b]),
        )
        return [(s.kind, s.text, s.old) for s in spans if s.kind != "equal"]

    assert kinds("raw", "clean") == [("delete", "", "\u200b")]
    # Spaces around both ideographs (the two between them are one marked run).
    assert kinds("clean", "cjk") == [("insert", " ", ""), ("insert", "  ", ""), ("insert", " ", "")]
    assert kinds("cjk", "nfd") == [("replace", "e\u0301", "é")]
    assert kinds("nfd", "strip_accents") == [("delete", "", "\u0301")]
    assert kinds("strip_accents", "lowercase") == [("replace", "h", "H")]


# ----------------------------------------------------------------------------------- badges


def test_invisible_chars_become_labelled_badges_that_keep_the_text():
    text = "a b\tc\nd\u200be\u00adf\x07g\u200dh\ufeffi\u00a0j"
    nodes = chars.text_nodes(text, 0, "equal")
    assert "".join(n.text() for n in nodes) == text
    labels = {n.text(): n.attrs["data-label"] for n in nodes if "data-label" in n.attrs}
    assert labels == {
        " ": "·",
        "\t": "TAB",
        "\n": "LF",
        "\u200b": "ZWSP",
        "\u00ad": "SHY",
        "\x07": "U+0007",
        "\u200d": "ZWJ",
        "\ufeff": "BOM",
        "\u00a0": "NBSP",
    }
    for n in nodes:
        if "data-label" in n.attrs:
            assert n.attrs["title"].startswith(f"U+{ord(n.text()):04X} ")
    # Every badge and run knows where it sits in the stage text (for the inspector).
    starts = [int(n.attrs["data-s"]) for n in nodes]
    assert starts == sorted(starts) and starts[0] == 0
    for n in nodes:
        k = int(n.attrs["data-s"])
        assert text[k : k + len(n.text())] == n.text()


def test_visible_letters_get_no_badge():
    for c in "aé東ж😀\u0301!":
        assert chars.invisible_label(c) is None, repr(c)


def test_char_info_against_unicodedata():
    info = chars.char_info("é", 1, "Héllo")
    assert info["code_point"] == "U+00E9"
    assert info["name"] == unicodedata.name("é") == "LATIN SMALL LETTER E WITH ACUTE"
    assert info["category"].startswith("Ll ")
    assert info["utf8"] == " ".join(f"{b:02X}" for b in "é".encode()) == "C3 A9"
    assert info["origin"] == "input char 1: é (U+00E9)"
    assert chars.char_info("😀", None)["utf8"] == "F0 9F 98 80"
    assert chars.char_info("\x07", 0, "\x07")["name"] == "<control>"


# ---------------------------------------------------------------------------------- stepper


@pytest.mark.parametrize("text", INPUTS)
def test_every_step_shows_the_reference_text(bert, bert_reference, text):
    trace = bert.trace(text)
    expected = reference_stages(text)
    all_steps = view.steps(trace)
    assert [s["name"] for s in all_steps] == [*expected, "pre_tokens", "wordpiece", "ids"]
    encoding = bert_reference.encode(text)
    normalized = expected["lowercase"]
    words = [w for w, _ in bert_reference.pre_tokenizer.pre_tokenize_str(normalized)]
    for k, s in enumerate(all_steps):
        node = view.render_step(trace, k, text)
        assert node.attrs["data-step"] == s["name"]
        if s["name"] in expected:
            assert node.find("step-text").text() == expected[s["name"]], s["name"]
        elif s["name"] == "pre_tokens":
            assert [c.text() for c in node.find_all("pre-token")] == words
        elif s["name"] == "wordpiece":
            assert [c.text() for c in node.find_all("wp-token")] == encoding.tokens
        else:
            assert json.loads(node.find("step-ids").text()) == encoding.ids
        assert set(tags(node)) <= {"section", "div", "span", "h3", "p", "ol", "li", "code"}


@pytest.fixture(scope="module")
def general():
    """(ours, reference) for each general tokenizer file (tests/general_files.py)."""
    import general_files as g
    import tokenprism

    files = {
        "unigram": g.unigram(),
        "gpt2": g.gpt2(),
        "regex_bpe": g.regex_bpe(),
        "prefixed_wordlevel": g.prefixed_wordlevel(),
    }
    return {
        name: (tokenprism.Tokenizer.from_str(spec), g.reference_tokenizer(spec), spec)
        for name, spec in files.items()
    }


@pytest.mark.parametrize("name", ["unigram", "gpt2", "regex_bpe", "prefixed_wordlevel"])
def test_other_models_step_through_their_own_stages(general, name):
    import general_files as g

    ours, reference, spec = general[name]
    model = json.loads(spec)["model"]["type"]
    for text in [*g.TEXTS, ""]:
        trace = ours.trace(text)
        all_steps = view.steps(trace)
        names = [s["name"] for s in all_steps]
        assert len(set(names)) == len(names)
        assert names[-3:] == ["pre_tokens", "model", "ids"]
        assert all_steps[-2]["label"] == model
        encoding = reference.encode(text)
        last = len(trace["stages"]) - 1
        normalized = reference.normalizer.normalize_str(text) if reference.normalizer else text
        for k, s in enumerate(all_steps):
            node = view.render_step(trace, k, text)
            assert node.attrs["data-step"] == s["name"]
            assert node.find("step-name").text() == s["label"]
            if k == last:
                assert node.find("step-text").text() == normalized
            elif s["name"] == "model":
                assert [c.text() for c in node.find_all("model-token")] == encoding.tokens
                assert not node.find_all("wp-token")
            elif s["name"] == "ids":
                assert json.loads(node.find("step-ids").text()) == encoding.ids
            assert set(tags(node)) <= {"section", "div", "span", "h3", "p", "ol", "li", "code"}
        assert view.render_tokens_over_text(trace, "text").text() == text
        ids = view.render_tokens_over_text(trace, "ids")
        assert [int(c.text()) for c in ids.find_all("token-id")] == encoding.ids
        assert view.render_fast(trace).find("fast").text().startswith("This tokenizer's")
        view.render_timeline(trace, len(all_steps) - 1)


@pytest.mark.parametrize("name", ["t5", "mon"])
def test_unigram_model_step_draws_each_pre_tokens_lattice(name):
    """The model step of a Unigram file offers its pre-tokens; each one's lattice drawing
    highlights the reference model's pieces and lists its tokens (bytes for unknown chars with
    byte fallback, in mon), and draws every node with DOM nodes and SVG only."""
    import general_files as g
    import tokenprism
    from paths import reference, unigram_json

    spec = unigram_json(name).read_text(encoding="utf-8")
    ours, ref = tokenprism.Tokenizer.from_str(spec), reference().Tokenizer.from_str(spec)
    checked = 0
    for text in [*g.TEXTS, "ᠮᠣᠩᠭᠣᠯ ꯃꯩꯇꯩ internationalization"]:
        trace = ours.trace(text)
        k = view.step_index(trace, "model")
        pieces = [p["text"] for p in trace["pre_tokens"]]
        step = view.render_step(trace, k, text, len(pieces) - 1)
        chips = step.find_all("step-piece")
        assert [c.text() for c in chips] == pieces
        assert [c.attrs["aria-pressed"] for c in chips][-1:] == ["true"]
        for piece in pieces:
            node = view.render_lattice(piece, ours.lattice(piece, view.LATTICE_MAX_NODES))
            want = [t.value for t in ref.model.tokenize(piece)]
            assert [c.text() for c in node.find_all("lattice-path-token")] == want, piece
            best = [n for n in node.find_all("lattice-node") if n.attrs["data-best"] == "1"]
            if not any("unk" in n.attrs["class"] for n in best):
                assert [n.attrs["data-piece"] for n in best] == want, piece
            assert "".join(n.attrs["data-piece"] for n in best) == piece
            drawn = {"div", "p", "code", "ol", "li", "svg", "g", "title", "rect", "text"}
            assert set(tags(node)) <= drawn
            checked += 1
    assert checked > 25


def test_a_repeated_stage_is_numbered(general):
    ours, _, _ = general["regex_bpe"]
    trace = ours.trace("It’s  here")
    assert [s["name"] for s in trace["stages"]] == ["raw", "nfkc", "replace", "replace"]
    steps = view.steps(trace)
    assert [(s["name"], s["label"]) for s in steps[2:4]] == [
        ("replace", "Replace"),
        ("replace#2", "Replace 2"),
    ]
    assert view.step_index(trace, "replace#2") == 3


def test_chars_put_before_the_text_are_insertions(general):
    ours, reference, _ = general["prefixed_wordlevel"]
    text = "Hi Zoë"
    trace = ours.trace(text)
    normalized = reference.normalizer.normalize_str(text)
    # Prepend's "▁" stems from the first char; the last Replace's "«" from none.
    prepend = view.render_step(trace, 2, text).find("step-text")
    assert prepend.text() == "▁hi zoë"
    assert [(c.attrs.get("class"), c.text()) for c in prepend.children[:2]] == [
        ("ins", "▁"),
        (None, "hi"),
    ]
    last = view.render_step(trace, len(trace["stages"]) - 1, text).find("step-text")
    assert last.text() == normalized
    assert [(c.attrs.get("class"), c.text()) for c in last.children] == [
        ("ins", "«"),
        (None, normalized[1:]),
    ]
    orig = view.stage_orig(trace["stages"][-1])
    assert (
        chars.char_info("«", orig[0], text)["origin"] == "no input char: inserted before the text"
    )
    assert chars.char_info("▁", orig[1], text)["origin"] == "input char 0: H (U+0048)"


def test_timeline_has_a_bar_per_step(bert):
    trace = bert.trace(EXAMPLE)
    svg = view.render_timeline(trace, 2)
    rows = [n for n in svg.walk() if n.attrs.get("data-step") is not None]
    assert [int(r.attrs["data-step"]) for r in rows] == list(range(len(view.steps(trace))))
    assert "current" in rows[2].attrs["class"]
    assert svg.tag == "svg"


def test_repeated_times_show_their_spread_and_basis(bert):
    trace = bert.trace(EXAMPLE)
    n = len(view.steps(trace))
    # As the page's worker writes it: medians per run, and each step's interquartile range.
    trace["timing"] = {
        "runs": 900,
        "batches": 9,
        "resolution_us": 5.0,
        "spread": [[0.5 * k, 0.5 * k + 0.25] for k in range(n - 1)],
    }
    trace["stages"][1]["micros"] = 0.625
    step = view.render_step(trace, 1, EXAMPLE)
    assert step.find("stage-time").text() == "0.62 µs (0.50 µs–0.75 µs)"
    basis = step.find("timing-basis")
    assert "median over 9 batches of 100 runs (900 runs)" in basis.text()
    assert "5.00 µs" in basis.text() and basis.attrs["data-resolution"] == "5.0"
    # One run of steps far longer than the clock step: no spread, no word on the clock.
    trace["timing"] = {"runs": 1, "batches": 1, "resolution_us": 1e-6, "spread": None}
    step = view.render_step(trace, 1, EXAMPLE)
    assert "(" not in step.find("stage-time").text()
    assert step.find("timing-basis").text() == "Times from one run."
    # A trace without timing (the native module's) shows no basis.
    del trace["timing"]
    assert view.render_step(trace, 1, EXAMPLE).find("timing-basis") is None


def test_step_index_falls_back_to_the_last_stage(bert):
    trace = bert.trace(EXAMPLE)
    assert view.step_index(trace, "nfd") == 3
    assert view.step_index(trace, "ids") == len(view.steps(trace)) - 1
    assert view.step_index(trace, "nonsense") == len(trace["stages"]) - 1


# ----------------------------------------------------------------------------------- tokens


@pytest.mark.parametrize("text", INPUTS)
def test_tokens_over_the_original_text(bert, bert_reference, text):
    trace = bert.trace(text)
    encoding = bert_reference.encode(text)
    node = view.render_tokens_over_text(trace, "text")
    assert node.text() == text
    spans = node.find_all("token-span")
    expected = [
        (t, text[a:b])
        for t, (a, b), sp in zip(encoding.tokens, encoding.offsets, encoding.special_tokens_mask)
        if not (sp and a == b)
    ]
    assert [(s.attrs["title"].split(" → ")[0], s.text()) for s in spans] == expected
    unk = [s for s in spans if "unk" in s.attrs["class"].split()]
    assert len(unk) == encoding.tokens.count("[UNK]")
    ids = view.render_tokens_over_text(trace, "ids")
    assert [int(c.text()) for c in ids.find_all("token-id")] == encoding.ids


def test_counts_cover_the_input(bert, bert_reference):
    text = "naïve 東京 👩🏽‍💻"
    node = view.render_counts(bert.trace(text))
    n_tokens = len(bert_reference.encode(text).ids)
    assert node.find("count-chars").text() == f"chars{len(text)}"
    assert node.find("count-bytes").text() == f"bytes{len(text.encode())}"
    assert node.find("count-tokens").text() == f"tokens{n_tokens}"
    assert node.find("count-chars-per-token").text() == f"chars/token{len(text) / n_tokens:.2f}"


def test_fast_path_view_matches_the_stats(bert):
    text = "plain ascii text, long enough for several blocks of sixteen bytes. Ünïcode too"
    trace = bert.trace(text)
    node = view.render_fast(trace)
    blocks = trace["fast"]["stats"]["blocks"]
    cells = node.find_all("block")
    assert len(cells) == len(blocks) > 0
    names = {0: "skipped", 1: "folded", 2: "decoded"}
    assert [c.attrs["class"].split()[1] for c in cells] == [names[k] for _, k in blocks]
    assert len(node.find_all("pages")[0].children) == len(trace["fast"]["stats"]["pages"])


# ------------------------------------------------------------------------------ share links

states = st.fixed_dictionaries(
    {
        "text": st.text(st.characters(blacklist_categories=("Cs",)), max_size=200),
        "tokenizer": st.just("bert-base-uncased"),
        "options": st.fixed_dictionaries({k: st.booleans() for k in view.OPTION_KEYS}),
        "fast": st.fixed_dictionaries({k: st.booleans() for k in view.FAST_KEYS}),
        "step": st.sampled_from(link.STEP_NAMES),
        "view": st.sampled_from(["text", "ids"]),
    }
)


@given(states)
def test_state_round_trips_through_a_link(state):
    fragment = link.encode_state(state)
    assert fragment is not None and fragment.startswith("s=")
    assert set(fragment[2:]) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )
    assert link.decode_state("#" + fragment) == (state, None)


@pytest.mark.parametrize("model", [m.id for m in models.MODELS])
def test_every_model_and_its_own_steps_round_trip_through_a_link(model):
    state = {**link.default_state(), "tokenizer": model}
    assert link.decode_state(link.encode_state(state)) == (state, None)
    # Another model's pipeline names its own steps; BERT's has only its six stages.
    state["step"] = "replace#2"
    state_back, message = link.decode_state(link.encode_state(state))
    if model == models.DEFAULT:
        assert state_back == link.default_state() and message
    else:
        assert (state_back, message) == (state, None)


def pack(obj) -> str:
    raw = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return "s=" + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")


def good(**changes):
    compact = {
        "t": "hi",
        "k": "bert-base-uncased",
        "o": "1111",
        "f": "1111",
        "s": "nfd",
        "v": "ids",
    }
    compact.update(changes)
    return compact


HOSTILE = {
    "not base64": "s=<img src=x onerror=alert(1)>",
    "javascript url": "javascript:alert(1)",
    "javascript in state": "s=javascript:alert(1)",
    "no zlib": "s=" + base64.urlsafe_b64encode(b"plain bytes").decode(),
    "truncated zlib": pack(good())[:-6],
    "broken utf-8": pack(b'{"t": "\xff\xfe"}'),
    "not json": pack(b"{{{"),
    "json list": pack([1, 2, 3]),
    "lone surrogate": pack(
        b'{"t":"\\ud800","k":"bert-base-uncased","o":"1111","f":"1111","s":"nfd","v":"ids"}'
    ),
    "unknown tokenizer": pack(good(k="javascript:alert(1)")),
    "bad option bits": pack(good(o="11x1")),
    "bad step": pack(good(s="</script>")),
    "bad step of another model": pack(good(k="qwen3", s="<b>#1")),
    "bad view": pack(good(v=["ids"])),
    "text not str": pack(good(t={"x": 1})),
    "10 MB of text": pack(good(t="a" * 10_000_000)),
    "huge fragment": "s=" + "A" * 5_000_000,
    "deep json": pack(b"[" * 100_000 + b"]" * 100_000),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_links_open_the_default_view_with_a_message(name):
    state, message = link.decode_state(HOSTILE[name])
    assert state == link.default_state()
    assert message and len(message) < 100


def test_hostile_text_in_a_valid_link_is_only_text(bert):
    text = "<img src=x onerror=alert(1)></script><script>alert(1)</script> javascript:alert(1)"
    state, message = link.decode_state(pack(good(t=text)))
    assert message is None and state["text"] == text
    trace = bert.trace(text)
    for k in range(len(view.steps(trace))):
        node = view.render_step(trace, k, text)
        assert "script" not in set(tags(node)) and "img" not in set(tags(node))
        assert not any(a.startswith("on") for n in node.walk() for a in n.attrs)
    assert view.render_tokens_over_text(trace).text() == text


@settings(max_examples=300)
@given(st.text(max_size=300))
def test_decoding_never_raises(fragment):
    state, message = link.decode_state(fragment)
    assert isinstance(state, dict) and (message is None or isinstance(message, str))


def test_gallery_links_decode_to_their_examples():
    # The Russian example is the sentence of the textbook's chapter 1, where the
    # project's seeds are present.
    for seed in Path("/work/shared/seeds").glob("003*"):
        assert f'ru = "{gallery.RUSSIAN}"' in seed.read_text(encoding="utf-8")
    links = gallery.example_links()
    assert len(links) == len(gallery.EXAMPLES) == 8
    for (title, text, step), (title2, fragment) in zip(gallery.EXAMPLES, links):
        state, message = link.decode_state(fragment)
        assert message is None and title == title2
        assert state["text"] == text and state["step"] == step
    tree = gallery.render_gallery("http://example.test/sub/path/index.html")
    hrefs = [a.attrs["href"] for a in tree.find_all("example")]
    assert all(h.startswith("http://example.test/sub/path/index.html#s=") for h in hrefs)


def test_too_long_text_gives_no_link():
    state = link.default_state()
    state["text"] = "x" * (link.MAX_LINK_TEXT + 1)
    assert link.encode_state(state) is None


def test_trimmed_traces_use_their_totals(bert):
    trace = bert.trace(EXAMPLE)
    trace["total"] = {
        "chars": 1000,
        "bytes": 1200,
        "tokens": 300,
        "unk": 0,
        "truncated": True,
        "shown_chars": 17,
    }
    node = view.render_counts(trace)
    assert node.find("count-tokens").text() == "tokens300"
    assert node.find("count-chars-per-token").text() == "chars/token3.33"
