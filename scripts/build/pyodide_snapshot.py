"""Make a memory snapshot of Pyodide after its start-up, for the page to start from.

    python scripts/build/pyodide_snapshot.py PYODIDE_DIR OUT.gz

Pyodide's start-up runs its interpreter over the bootstrap (the import system, `pyodide`, its
FFI) for seconds: ~3 s of the page's ~4.5 s on a quiet machine, in both fresh and repeat
visits. Restoring a snapshot of the wasm memory taken after that start-up skips all of it
(Pyodide's `_makeSnapshot` / `_loadSnapshot` options). The snapshot is made here, in
Debian's Chromium (headless, the tests' flags) on the page's own Pyodide files, with the
standard-library modules the page's Python imports already imported; the page's own modules
are not in it, so it depends on the Pyodide build only (Pyodide checks its build id on load,
and boot.js falls back to a plain start if the snapshot is missing or refused).

The output is gzip (~1/7 of the 31 MB of memory); boot.js inflates it with
DecompressionStream, or takes it as is when a host already sent it decoded.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# What the page's Python imports from the standard library and Pyodide (web/**/*.py), plus
# what those pull in; importing them here is what the snapshot saves the page. They pull in
# `random`, whose state would then be the same for every visitor: boot.js reseeds it.
IMPORTS = [
    "asyncio",
    "base64",
    "binascii",
    "dataclasses",
    "difflib",
    "json",
    "traceback",
    "unicodedata",
    "zlib",
    "pyodide.ffi",
    "pyodide.http",
]

MAKE = """async (imports) => {
  const { loadPyodide } = await import("./pyodide.mjs");
  const py = await loadPyodide({ indexURL: new URL("./", location.href).href, _makeSnapshot: true });
  py.runPython(imports.map((name) => `import ${name}`).join("\\n"));
  const bytes = py.makeMemorySnapshot();
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}"""


def make_snapshot(pyodide_dir: Path) -> bytes:
    from playwright import sync_api

    import serve
    from paths import CHROMIUM, CHROMIUM_ARGS

    # Plain: no CSP header, so page.evaluate may import the runtime.
    with serve.background(pyodide_dir, plain=True) as url, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{url}pyodide-lock.json")
            encoded = page.evaluate(MAKE, IMPORTS)
        finally:
            browser.close()
    return base64.b64decode(encoded)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pyodide_dir", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    raw = make_snapshot(args.pyodide_dir)
    data = gzip.compress(raw, compresslevel=9, mtime=0)
    part = args.out.with_name(args.out.name + ".part")
    part.write_bytes(data)
    part.replace(args.out)
    print(f"{args.out}: {len(raw) / 1e6:.1f} MB of memory, {len(data) / 1e6:.1f} MB gzip")


if __name__ == "__main__":
    main()
