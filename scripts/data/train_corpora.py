"""The Train tab's bundled texts, built into a folder (build.sh puts them in dist/data/train/).

    python scripts/data/train_corpora.py OUT_DIR     # write the texts and index.json
    python scripts/data/train_corpora.py --fetch     # only download what is needed (./build.sh setup)

The slices come from the development corpora (scripts/data/corpora.py; never committed):

    en-10k, en-100k     English (Debian fortunes), the first 10 / 100 KB, cut at a line end
    ru-10k, ru-100k     Russian (Debian fortunes-ru), likewise
    code-20k            Python (the standard library), 20 KB

and the parallel English/Russian pair for the fertility exercise from the LibreOffice help
(Debian packages libreoffice-help-en-us and libreoffice-help-ru, unpacked, not installed): the
same pages of text/shared/guide/ in both languages, read line by line; a line pair is kept when
both pages have the same number of lines and the Russian line is translated (mostly Cyrillic
letters); and ru-help-10k, lines of those Russian pages with no Latin letter at all (for the
morpheme exercise). index.json lists every file with its label and size.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402

SLICES = {  # name: (corpus, bytes, label)
    "en-10k": ("en", 10_000, "English, 10 KB (fortunes)"),
    "en-100k": ("en", 100_000, "English, 100 KB (fortunes)"),
    "ru-10k": ("ru", 10_000, "Russian, 10 KB (fortunes-ru)"),
    "ru-100k": ("ru", 100_000, "Russian, 100 KB (fortunes-ru)"),
    "code-20k": ("code", 20_000, "Python code, 20 KB (standard library)"),
}
PARALLEL_BYTES = 8_000  # of English text, about
RU_HELP_BYTES = 10_000
HELP = {"en": ("libreoffice-help-en-us", "en-US"), "ru": ("libreoffice-help-ru", "ru")}
# The header every help page starts with (title, then these four lines), in either language.
HEADER_LINES = 5


def help_dir(lang: str) -> Path:
    pkg, code = HELP[lang]
    return corpora.debian_package(pkg) / "usr/share/libreoffice/help" / code / "text/shared/guide"


def _cyrillic_share(line: str) -> float:
    letters = [c for c in line if c.isalpha()]
    if not letters:
        return 0.0
    return sum("\u0400" <= c <= "\u04ff" for c in letters) / len(letters)


@functools.lru_cache(maxsize=None)
def parallel() -> tuple[str, str]:
    """(English, Russian): the same help text in both languages, line for line."""
    en_dir, ru_dir = help_dir("en"), help_dir("ru")
    names = sorted(p.name for p in en_dir.glob("*.html") if (ru_dir / p.name).is_file())
    en_out: list[str] = []
    ru_out: list[str] = []
    size = 0
    for name in names:
        en_lines = corpora.html_text(en_dir / name).splitlines()[HEADER_LINES:]
        ru_lines = corpora.html_text(ru_dir / name).splitlines()[HEADER_LINES:]
        if len(en_lines) != len(ru_lines):
            continue
        for en, ru in zip(en_lines, ru_lines):
            if en == ru or len(en.split()) < 3 or _cyrillic_share(ru) < 0.6:
                continue
            en_out.append(en)
            ru_out.append(ru)
            size += len(en.encode()) + 1
        if size >= PARALLEL_BYTES:
            break
    return "\n".join(en_out) + "\n", "\n".join(ru_out) + "\n"


@functools.lru_cache(maxsize=None)
def russian_help(size: int = RU_HELP_BYTES) -> str:
    """Russian help text with no Latin letters at all (for the morpheme exercise): lines of
    at least three words from the same pages, in order, to about `size` bytes."""
    out, total = [], 0
    ru_dir = help_dir("ru")
    for path in sorted(ru_dir.glob("*.html")):
        for line in corpora.html_text(path).splitlines()[HEADER_LINES:]:
            if len(line.split()) < 3 or _cyrillic_share(line) < 1.0 or line in out:
                continue
            out.append(line)
            total += len(line.encode()) + 1
            if total >= size:
                return "\n".join(out) + "\n"
    return "\n".join(out) + "\n"


def texts() -> dict[str, tuple[str, str]]:
    """name -> (label, text) for every bundled text."""
    out = {}
    for name, (lang, size, label) in SLICES.items():
        out[name] = (
            label,
            corpora.capped(
                [corpora.read_text(corpora.data_dir() / "corpora" / f"{lang}.txt")], size
            ),
        )
    en, ru = parallel()
    out["parallel-en"] = ("English, LibreOffice help (parallel to the Russian)", en)
    out["parallel-ru"] = ("Russian, LibreOffice help (parallel to the English)", ru)
    out["ru-help-10k"] = ("Russian, LibreOffice help, 10 KB, no Latin letters", russian_help())
    return out


def write(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    index = []
    for name, (label, text) in texts().items():
        data = text.encode()
        (out_dir / f"{name}.txt").write_bytes(data)
        index.append({"name": name, "label": label, "file": f"{name}.txt", "bytes": len(data)})
    (out_dir / "index.json").write_text(
        json.dumps(index, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )


def main(argv: list[str]) -> None:
    if argv == ["--fetch"]:
        help_dir("en")
        help_dir("ru")
        return
    if len(argv) != 1:
        raise SystemExit(__doc__)
    write(Path(argv[0]))


if __name__ == "__main__":
    main(sys.argv[1:])
