"""Finish a dist folder: stamp the build id into sw.js and write manifest.json.

manifest.json lists every file of the folder (itself excepted) with its sha256 and size, and
the versions that went into it. `build` is a hash of all of that (sw.js taken before stamping,
so the id does not depend on itself); the service worker carries the same id, so a browser
sees a changed sw.js after any change to the folder, installs it, and moves to a new cache.
Paths are relative to the folder (the page's own directory) and sorted, and nothing
time-dependent goes in, so the same inputs always give the same bytes.

Usage: dist_manifest.py DIR --version tokenprism=0.1.0 --version pyodide=... [...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

MANIFEST = "manifest.json"
SERVICE_WORKER = "sw.js"
# sw.js in web/ carries this line; the build replaces "dev" with the build id.
BUILD_PLACEHOLDER = 'const BUILD = "dev";'


def file_entry(path: Path) -> dict[str, object]:
    data = path.read_bytes()
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def list_files(folder: Path) -> list[str]:
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.relative_to(folder).as_posix() != MANIFEST
    )


def finish(folder: Path, versions: dict[str, str]) -> dict[str, object]:
    files = {name: file_entry(folder / name) for name in list_files(folder)}
    if SERVICE_WORKER not in files:
        raise SystemExit(f"{folder}: no {SERVICE_WORKER}")
    sw_path = folder / SERVICE_WORKER
    sw_source = sw_path.read_text(encoding="utf-8")
    if sw_source.count(BUILD_PLACEHOLDER) != 1:
        raise SystemExit(f"{sw_path}: expected exactly one line {BUILD_PLACEHOLDER!r}")
    canonical = json.dumps({"versions": versions, "files": files}, sort_keys=True)
    build = hashlib.sha256(canonical.encode()).hexdigest()[:20]
    sw_path.write_text(
        sw_source.replace(BUILD_PLACEHOLDER, f'const BUILD = "{build}";'), encoding="utf-8"
    )
    files[SERVICE_WORKER] = file_entry(sw_path)
    manifest = {
        "name": "tokenprism",
        "build": build,
        "versions": versions,
        "total_size": sum(entry["size"] for entry in files.values()),
        "files": files,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--version", action="append", default=[], metavar="NAME=VERSION")
    args = parser.parse_args()
    versions = dict(item.split("=", 1) for item in args.version)
    manifest = finish(args.folder, versions)
    print(
        f"{len(manifest['files'])} files, {manifest['total_size']} bytes, build {manifest['build']}"
    )


if __name__ == "__main__":
    main()
