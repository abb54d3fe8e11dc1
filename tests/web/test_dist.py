"""The published folder (dist/, from `./build.sh dist` / `build`): self-contained, relative,
checked by its manifest, and working from a plain static host under a sub-path and offline.

Expected token ids come from `tokenizers` 0.23.3. Needs `./build.sh build` first.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from tokenizers import Tokenizer

import dist_manifest
import serve
import web_env
from web_env import ARTIFACTS, DIST, ROOT, Watch

PREFIX = "/demo/tokenprism/"
READY_TIMEOUT_MS = 90_000
# The service worker downloads the whole folder (~13 MB) after the page has started.
OFFLINE_COPY_TIMEOUT_MS = 90_000
TEXT = "Offline, über alles: 東京!"
PAGE_READY = '[data-testid="app"]:is([data-state="ready"], [data-state="failed"])'


@pytest.fixture(scope="module")
def manifest() -> dict:
    path = DIST / "manifest.json"
    if not path.is_file():
        pytest.fail(f"{path} is missing: run ./build.sh build (or ./build.sh dist) first")
    return json.loads(path.read_text())


def reference_ids(text: str) -> list[int]:
    reference = Tokenizer.from_file(str(DIST / "data" / "bert-base-uncased" / "tokenizer.json"))
    reference.no_padding()
    reference.no_truncation()
    return reference.encode(text).ids


# ------------------------------------------------------------------------ the folder itself


def test_manifest_lists_every_file_with_its_sha256(manifest):
    on_disk = {
        p.relative_to(DIST).as_posix()
        for p in DIST.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    }
    assert set(manifest["files"]) == on_disk
    for name, entry in manifest["files"].items():
        data = (DIST / name).read_bytes()
        assert entry["size"] == len(data), name
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), name
    assert manifest["total_size"] == sum(e["size"] for e in manifest["files"].values())
    # What the page needs is there, and the developer-only files are not.
    for name in (
        "index.html",
        "shell/boot.js",
        "app.py",
        "sw.js",
        "shell/sw-register.js",
        "pkg/tokenprism.js",
        "pkg/tokenprism_bg.wasm",
        "pkg-nosimd/tokenprism.js",
        "pkg-nosimd/tokenprism_bg.wasm",
        "pkg-general/tokenprism.js",
        "pkg-general/tokenprism_bg.wasm",
        "pyodide/pyodide.mjs",
        "pyodide/pyodide.asm.wasm",
        "data/bert-base-uncased/tokenizer.json",
    ):
        assert name in manifest["files"], name
    assert not [n for n in on_disk if n.endswith((".map", ".d.ts", ".stamp")) or "__pycache__" in n]
    # The only bytecode: the page's modules', made by the build (scripts/build/pyodide_pyc.mjs) and
    # listed for boot.js; "checked hash" pycs (flags 3), used only while their source matches.
    listed = json.loads((DIST / "py-modules.json").read_text())
    pycs = sorted(n for n in on_disk if n.endswith(".pyc"))
    assert pycs == [f"pyc/{name}" for name in listed["bytecode"]]
    assert {n.split(".")[0] + ".py" for n in listed["bytecode"]} == {*listed["modules"], "app.py"}
    for name in pycs:
        assert (DIST / name).read_bytes()[4:8] == b"\x03\0\0\0", name


# Size budgets of the wasm modules, gzip -9 as Python's gzip writes it (build.sh prints the
# same figure). The BERT core is what the page paints its first tokens with; both builds of it
# ship, and the page picks one (256 KiB). The general module (pkg-general) is fetched when a
# tokenizer file the BERT core cannot read is opened (500 KiB); the BPE module (pkg-bpe) when
# an OpenAI or Qwen vocabulary is picked (its ceiling holds its size against growth: 400 KiB
# since the block scanner learned cl100k's pattern, 396,505 B then).
# docs/PERFORMANCE.md lists what fills them.
WASM_BUDGETS = {
    "pkg/tokenprism_bg.wasm": 262_144,
    "pkg-nosimd/tokenprism_bg.wasm": 262_144,
    "pkg-general/tokenprism_bg.wasm": 512_000,
    "pkg-bpe/tokenprism_bg.wasm": 409_600,
}


@pytest.mark.parametrize("name", sorted(WASM_BUDGETS))
def test_wasm_module_within_its_size_budget(manifest, name):
    assert name in manifest["files"], name
    size = len(gzip.compress((DIST / name).read_bytes(), compresslevel=9))
    assert size <= WASM_BUDGETS[name], (
        f"{name}: {size:,} B gzip -9, over its budget of {WASM_BUDGETS[name]:,} B"
    )


def test_manifest_versions_and_build_id(manifest):
    with open(ROOT / "crate" / "Cargo.toml", "rb") as f:
        cargo = tomllib.load(f)
    pyodide_package = Path(os.environ.get("TOKENPRISM_CACHE") or Path.home() / ".cache/tokenprism")
    pyodide_package = pyodide_package / "npm/node_modules/pyodide/package.json"
    assert manifest["versions"] == {
        "tokenprism": cargo["package"]["version"],
        "pyodide": json.loads(pyodide_package.read_text())["version"],
        "wasm-bindgen": cargo["dependencies"]["wasm-bindgen"]["version"].lstrip("="),
    }
    # The service worker carries the build id, so a new build is a new worker and cache.
    sw = (DIST / "sw.js").read_text()
    assert f'const BUILD = "{manifest["build"]}";' in sw
    assert re.fullmatch(r"[0-9a-f]{20}", manifest["build"])


def test_build_id_follows_the_content(tmp_path, manifest):
    # Rebuilding the manifest of a copy gives the same id; changing one byte changes it.
    copy = tmp_path / "copy"
    shutil.copytree(DIST, copy)
    shutil.copy(ROOT / "web" / "sw.js", copy / "sw.js")
    assert dist_manifest.finish(copy, manifest["versions"]) == manifest
    shutil.copy(ROOT / "web" / "sw.js", copy / "sw.js")
    with open(copy / "shell" / "style.css", "a") as f:
        f.write("\n")
    assert dist_manifest.finish(copy, manifest["versions"])["build"] != manifest["build"]


# The page's own files: no reference may leave the folder. Pyodide is third-party and checked
# separately below (its references resolve against the indexURL the page passes in).
OWN_SUFFIXES = (".html", ".js", ".mjs", ".py", ".css", ".json")
URL_WITH_SCHEME = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://")
# A string literal, attribute or url() starting at the root ("/x") or on another host ("//x").
ROOT_REFERENCE = re.compile(r"""(?:["'`]|\burl\(\s*)(/[^"'`\s)]*)""")
# An unquoted HTML attribute pointing at the root: <script src=/boot.js>.
UNQUOTED_ROOT_ATTRIBUTE = re.compile(r"\b(?:src|href|action|content)\s*=\s*/", re.IGNORECASE)
# Namespace names (createElementNS), never fetched.
XML_NAMESPACES = ("http://www.w3.org/2000/svg",)
# Paths inside Pyodide's in-memory file system, not on the host: allowed.
IN_MEMORY_FS = ("/home/pyodide",)
# The only URLs in Pyodide 314.0.7's JS, none used by this page: the CDN is the fallback for
# packages (the page loads none, and the base for packages is the lock file's folder, i.e. the
# indexURL the page passes); file:// is for Node; https://host, ws:// and wss:// are how
# Python's socket emulation spells a connect() target.
PYODIDE_URLS = {
    "https://cdn.jsdelivr.net/pyodide/v${U}/full/",
    "file://",
    "file://${t}",
    "https://${t}",
    "ws://",
    "wss://",
}


def own_text_files() -> list[Path]:
    return [
        p
        for p in sorted(DIST.rglob("*"))
        if p.suffix in OWN_SUFFIXES
        and p.is_file()
        and p.relative_to(DIST).parts[0] not in ("pyodide", "data")
    ]


def test_shipped_files_make_no_absolute_references():
    files = own_text_files()
    names = {p.relative_to(DIST).as_posix() for p in files}
    assert {"index.html", "shell/boot.js", "app.py", "sw.js", "pkg/tokenprism.js"} <= names
    problems = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(DIST).as_posix()
        problems += [
            f"{name}: URL {m.group(0)!r}"
            for m in URL_WITH_SCHEME.finditer(text)
            if not text.startswith(XML_NAMESPACES, m.start())
        ]
        if name.endswith(".html"):
            problems += [f"{name}: {m.group(0)!r}" for m in UNQUOTED_ROOT_ATTRIBUTE.finditer(text)]
        for m in ROOT_REFERENCE.finditer(text):
            ref = m.group(1)
            # A lone "/" in Python is a division sign or a separator, not a path.
            if not ref.startswith(IN_MEMORY_FS) and not (ref == "/" and name.endswith(".py")):
                problems.append(f"{name}: absolute reference {ref!r}")
    assert problems == []


def test_no_build_machine_paths_anywhere():
    # Every text file, Pyodide's included: nothing may point into the machine that built it.
    needles = {str(ROOT), str(Path.home()), str(Path.home() / ".cache")}
    hits = []
    for path in DIST.rglob("*"):
        # The models' files are published files copied verbatim, and a vocabulary may hold a
        # token like "/root" (Qwen3's and Llama 3.2's do); what we build and write is checked.
        if path.relative_to(DIST).as_posix().startswith(("data/bpe/", "data/models/")):
            continue
        if path.is_file() and path.suffix in OWN_SUFFIXES + (".txt",):
            text = path.read_text(encoding="utf-8", errors="replace")
            hits += [f"{path.relative_to(DIST)}: {n}" for n in needles if n in text]
    assert hits == []


def test_pyodide_urls_are_the_known_unused_ones():
    found = set()
    for path in (DIST / "pyodide").glob("*.mjs"):
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r"""[a-zA-Z]+://[^"'`\s)]*""", text))
    assert found == PYODIDE_URLS
    # The page hands Pyodide its folder explicitly (resolved from the page's own URL), so
    # nothing falls back to the CDN; the browser tests below also watch every request.
    boot = (DIST / "shell" / "boot.js").read_text()
    assert 'const indexURL = here("pyodide/");' in boot
    assert re.findall(r"loadPyodide\(\{[^}]*\}\)", boot) == [
        "loadPyodide({ indexURL, _loadSnapshot: snapshot })",
        "loadPyodide({ indexURL })",
    ]


def test_pyodide_snapshot_is_for_this_pyodide():
    # The memory snapshot the page starts Python from (scripts/build/pyodide_snapshot.py): gzip of
    # Pyodide's snapshot format, stamped with the build id of the pyodide.asm.mjs next to it
    # (Pyodide refuses any other; the browser tests check the page does use it).
    data = gzip.decompress((DIST / "pyodide" / "snapshot.gz").read_bytes())
    magic, _, _, _ = struct.unpack_from("<4I", data)
    assert magic == 1886286592  # Pyodide's snapshot magic number
    build_id = "".join(f"{w:08x}" for w in struct.unpack_from("<8I", data, 16))
    assert f'BUILD_ID:"{build_id}"' in (DIST / "pyodide" / "pyodide.mjs").read_text()


def test_build_sh_dist_into_another_folder_gives_the_same_site(tmp_path, manifest):
    # `./build.sh dist DIR` and the dist/ that `serve` and these tests use come from the same
    # function: same files, same bytes (the build is up to date, so this only assembles).
    out = tmp_path / "site"
    env = {**os.environ, "PYTHON": os.environ.get("PYTHON", sys.executable)}
    run = subprocess.run(
        ["bash", str(ROOT / "build.sh"), "dist", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads((out / "manifest.json").read_text()) == manifest, (
        "dist/ differs from a fresh `./build.sh dist`: rebuild with ./build.sh build"
    )
    # A folder that is not a tokenprism site is never replaced.
    other = tmp_path / "precious"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    run = subprocess.run(
        ["bash", str(ROOT / "build.sh"), "dist", str(other)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert run.returncode != 0
    assert (other / "keep.txt").read_text() == "mine"


# ------------------------------------------------------------------------ the static server


def served(directory: Path, prefix: str = PREFIX, plain: bool = True):
    """Here a plain static host under a sub-path, unless told otherwise."""
    return web_env.served(directory, prefix, plain)


def _get(url: str):
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def test_server_modes(manifest):
    with served(DIST, plain=True) as base:
        origin = base[: -len(PREFIX)]
        status, headers, body = _get(base + "pkg/tokenprism_bg.wasm")
        assert status == 200 and headers["Content-Type"] == "application/wasm"
        assert (
            hashlib.sha256(body).hexdigest()
            == manifest["files"]["pkg/tokenprism_bg.wasm"]["sha256"]
        )
        assert "Cross-Origin-Opener-Policy" not in headers and "Cache-Control" not in headers
        # Module scripts load only with a JavaScript MIME type.
        assert _get(base + "pyodide/pyodide.mjs")[1]["Content-Type"] == "text/javascript"
        assert _get(base)[0] == 200
        assert _get(origin + "/index.html")[0] == 404
        status, headers, _ = _get(origin + PREFIX.rstrip("/"))
        assert status == 301 and headers["Location"] == PREFIX
        status, headers, _ = _get(base + "pkg")
        assert status == 301 and headers["Location"] == PREFIX + "pkg/"
    with served(DIST, prefix="/", plain=False) as base:
        status, headers, _ = _get(base + "index.html")
        assert status == 200
        assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
        assert headers["Cross-Origin-Embedder-Policy"] == "require-corp"
        # The page's policy as a header too (the <meta> cannot carry frame-ancestors).
        assert "script-src 'self' 'wasm-unsafe-eval'" in headers["Content-Security-Policy"]
        assert "frame-ancestors 'self'" in headers["Content-Security-Policy"]


# ------------------------------------------------------------------------ in the browser


def wait_ready(page) -> None:
    page.wait_for_selector(PAGE_READY, timeout=READY_TIMEOUT_MS)
    state = page.get_by_test_id("app").get_attribute("data-state")
    assert state == "ready", page.get_by_test_id("error").text_content()


# What the page shows for the tokens: the ids as JSON, or (in the stepper UI) a token count.
SHOWN_TOKENS = """() => document.querySelector('[data-testid=ids]')?.textContent
    ?? document.querySelector('[data-testid=count-tokens]')?.textContent"""


def check_tokenizes(page, text: str = TEXT) -> None:
    box = page.get_by_test_id("input")
    box.fill("")
    box.press_sequentially(text)
    want = reference_ids(text)
    page.wait_for_function(
        f"want => want.includes(({SHOWN_TOKENS})())",
        arg=[json.dumps(want), f"tokens{len(want)}"],
        timeout=20_000,
    )


@contextmanager
def visit(browser, url, **context_args):
    """A page in a new context, opened at `url` and ready, and its Watch; the context is closed
    afterwards."""
    context = browser.new_context(**context_args)
    page = context.new_page()
    watch = Watch(page)
    try:
        page.goto(url)
        wait_ready(page)
        yield page, watch
    finally:
        context.close()


WORKER_STATE = """async () => {
    const r = await navigator.serviceWorker.getRegistration();
    if (!r) return {registered: false};
    const s = (w) => (w ? w.state : null);
    return {registered: true, installing: s(r.installing), waiting: s(r.waiting),
            active: s(r.active), caches: await caches.keys()};
}"""


def wait_offline_copy(page) -> None:
    """Until the service worker has cached the folder and is active (the next load of the page
    goes through it). Not "controls this page": a page whose reload was in flight while the
    worker activated is not claimed, and stays uncontrolled until it next loads (a CI run
    waited 90 s on such a page with the worker active and its cache made). On a timeout the
    failure says where the worker got to."""
    poll(
        lambda: page.evaluate(WORKER_STATE),
        lambda state: state.get("active") == "activated",
        lambda state: (
            f"no active service worker after {OFFLINE_COPY_TIMEOUT_MS // 1000} s: {state}"
        ),
    )


def cache_names(page) -> list[str]:
    return page.evaluate("caches.keys()")


def poll(get, done, what):
    """get() until done(its value), which it returns; polled from here, as wait_for_function
    does not await a predicate's promise. The bound is a hang guard, as long as the offline
    copy's on a loaded machine."""
    deadline = time.monotonic() + OFFLINE_COPY_TIMEOUT_MS / 1000
    while not done(have := get()):
        assert time.monotonic() < deadline, what(have)
        time.sleep(0.25)
    return have


def wait_for_caches(page, want: list[str]) -> None:
    poll(
        lambda: cache_names(page),
        lambda have: have == want,
        lambda have: f"caches {have}, expected {want}",
    )


def test_plain_host_under_a_sub_path_then_offline(browser, manifest):
    with served(DIST, plain=True) as base:
        with visit(browser, base, permissions=["clipboard-read", "clipboard-write"]) as (
            page,
            watch,
        ):
            # No cross-origin isolation from this host, and the page needs none.
            assert page.evaluate("crossOriginIsolated") is False
            check_tokenizes(page)
            # Every request stayed inside the folder: no CDN, nothing at the host's root.
            assert watch.requests and all(url.startswith(base) for url in watch.requests), [
                url for url in watch.requests if not url.startswith(base)
            ]

            # A share link ("Copy link") is built from the page's own location: it opens this
            # copy, under the sub-path, in the same state.
            page.get_by_test_id("copy-link").click()
            # The clipboard write is asynchronous: read it once the page says it is done.
            page.wait_for_function(
                "() => document.querySelector('#share-status').textContent === 'link copied'"
            )
            url = page.evaluate("navigator.clipboard.readText()")
            assert url.startswith(base) and "#s=" in url, url
            page.reload()
            wait_ready(page)
            check_tokenizes(page, "reloaded under the sub-path")
            fresh = browser.new_context().new_page()
            fresh_watch = Watch(fresh)
            fresh.goto(url)
            wait_ready(fresh)
            assert fresh.get_by_test_id("input").input_value() == TEXT
            fresh.wait_for_function(
                f"want => want.includes(({SHOWN_TOKENS})())",
                arg=[json.dumps(reference_ids(TEXT)), f"tokens{len(reference_ids(TEXT))}"],
                timeout=20_000,
            )
            check_tokenizes(fresh, "a fresh visitor")
            fresh.context.close()
            assert fresh_watch.problems == []

            # Offline: everything now comes from the service worker's copy.
            wait_offline_copy(page)
            assert cache_names(page) == [f"tokenprism {PREFIX} {manifest['build']}"]
            page.context.set_offline(True)
            offline_responses = []
            page.on("response", lambda r: offline_responses.append(r))
            page.reload()
            wait_ready(page)
            check_tokenizes(page, "still works offline: 東京")
            assert offline_responses and all(r.from_service_worker for r in offline_responses)
            # The page under its other address, with a query string, offline too.
            page.goto(base + "index.html?from=offline")
            wait_ready(page)
            check_tokenizes(page, "index.html, offline")
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "dist-offline.png"), full_page=True)
        assert watch.problems == []


def test_offline_copy_keeps_cross_origin_isolation(browser):
    # With serve.py's default headers the page is cross-origin isolated (fine timers); served
    # from the service worker's cache it must stay so.
    with served(DIST, plain=False) as base:
        with visit(browser, base) as (page, watch):
            assert page.evaluate("crossOriginIsolated") is True
            wait_offline_copy(page)
            page.context.set_offline(True)
            page.reload()
            wait_ready(page)
            assert page.evaluate("navigator.serviceWorker.controller !== null")
            assert page.evaluate("crossOriginIsolated") is True
            check_tokenizes(page)
        assert watch.problems == []


def test_offline_copy_survives_a_failed_download(browser):
    # The host answers the service worker's download of one file with a 503 once: the worker
    # tries it again, and the offline copy is made on this visit, not lost until the next one.
    server = serve.make_server(DIST, quiet=True, prefix=PREFIX, plain=True)
    base_handler = server.RequestHandlerClass
    requests = []

    class OneFailure(base_handler.func):
        def do_GET(self):
            if self.path.endswith("/style.css"):
                requests.append(self.path)
                if len(requests) == 2:  # the first is the page's own; the second the worker's
                    self.send_error(503, "busy")
                    return
            super().do_GET()

    server.RequestHandlerClass = functools.partial(
        OneFailure, *base_handler.args, **base_handler.keywords
    )
    with serve.serving(server, PREFIX) as base, visit(browser, base) as (page, watch):
        check_tokenizes(page)
        wait_offline_copy(page)
        assert len(requests) >= 3, requests
        assert page.evaluate("caches.match('shell/style.css').then((r) => r !== undefined)")
        page.context.set_offline(True)
        page.reload()
        wait_ready(page)
        check_tokenizes(page, "offline after a retried download")
    assert watch.problems == []


def test_new_build_replaces_the_offline_copy(browser, tmp_path, manifest):
    site = tmp_path / "site"
    shutil.copytree(DIST, site)
    with served(site, plain=True) as base:
        with visit(browser, base) as (page, watch):
            wait_offline_copy(page)
            old_cache = f"tokenprism {PREFIX} {manifest['build']}"
            assert cache_names(page) == [old_cache]

            # Publish a new build: a changed page, re-manifested the way build.sh does it.
            index = site / "index.html"
            index.write_text(
                index.read_text().replace(
                    "<title>tokenprism</title>", "<title>tokenprism, next build</title>"
                )
            )
            shutil.copy(ROOT / "web" / "sw.js", site / "sw.js")
            new = dist_manifest.finish(site, manifest["versions"])
            new_cache = f"tokenprism {PREFIX} {new['build']}"
            assert new["build"] != manifest["build"]

            # The next visit finds the new worker; it caches the new build, takes over and
            # drops the old cache.
            page.reload()
            wait_ready(page)
            wait_for_caches(page, [new_cache])
            page.context.set_offline(True)
            page.reload()
            wait_ready(page)
            assert page.title() == "tokenprism, next build"
            check_tokenizes(page)
        assert watch.problems == []


# The BPE wasm module (chat templates, training) and tokenizer files (~20 MB) and the general
# module are not precached: sw.js stores each the first time the page fetches it, and serves it from the cache
# afterwards (offline too).
ON_DEMAND = ("pkg-bpe/", "data/bpe/", "data/models/", "pkg-general/")
CACHED_URLS = """async (name) => (await (await caches.open(name)).keys()).map((r) => r.url)"""


def test_bpe_files_are_cached_on_first_use(browser, manifest):
    from paths import data_dir

    os.environ["TIKTOKEN_CACHE_DIR"] = str(data_dir() / "bpe" / "tiktoken-cache")
    import tiktoken

    cache = f"tokenprism {PREFIX} {manifest['build']}"
    with served(DIST, plain=True) as base:
        with visit(browser, base) as (page, watch):
            wait_offline_copy(page)
            precached = {url.removeprefix(base) for url in page.evaluate(CACHED_URLS, cache)}
            want = {
                path
                for path in manifest["files"]
                if path not in ("sw.js", "manifest.json") and not path.startswith(ON_DEMAND)
            }
            assert precached == want
            assert any(path.startswith(ON_DEMAND) for path in manifest["files"])

            # First use of a chat model: the tokenize tab's general module, the chat section's
            # BPE module and o200k_base's ranks go into the same cache.
            page.get_by_test_id("tokenizer").select_option("o200k_harmony")
            ready = '[data-testid="chat-section"][data-state="ready"][data-model="o200k_harmony"]'
            page.wait_for_selector(ready, state="attached", timeout=READY_TIMEOUT_MS)
            used = {
                "pkg-bpe/tokenprism.js",
                "pkg-bpe/tokenprism_bg.wasm",
                "pkg-general/tokenprism.js",
                "pkg-general/tokenprism_bg.wasm",
                "data/bpe/o200k_base.tiktoken",
            }
            have = poll(
                lambda: {u.removeprefix(base) for u in page.evaluate(CACHED_URLS, cache)},
                lambda have: used <= have,
                lambda have: sorted(used - have),
            )
            assert not [p for p in have - used if p.startswith(ON_DEMAND)]

            # Offline: the page opens with o200k_harmony (the address holds it), encodes and
            # renders the chat.
            page.context.set_offline(True)
            page.reload()
            page.wait_for_selector(ready, state="attached", timeout=READY_TIMEOUT_MS)
            assert page.get_by_test_id("chat-part").count() > 0
            text = "offline BPE: Привет 東京 🙂"
            page.get_by_test_id("input").fill(text)
            page.wait_for_function(
                "want => document.querySelector('[data-testid=token-view]')?.textContent === want",
                arg=text,
            )
            last = page.locator('[data-testid="timeline"] [data-step]').count() - 1
            page.locator(f'[data-testid="timeline"] [data-step="{last}"] .tl-hit').click()
            page.wait_for_selector('[data-testid="step-ids"]')
            shown = json.loads(page.get_by_test_id("step-ids").text_content())
            assert shown == tiktoken.get_encoding("o200k_base").encode_ordinary(text)
        assert watch.problems == []


def test_general_module_is_cached_on_first_use(browser, manifest, tmp_path):
    import general_files as g

    spec = g.unigram()
    path = tmp_path / "t5.json"
    path.write_text(spec, encoding="utf-8")
    text = g.TEXTS[1]
    want = g.reference_tokenizer(spec).encode(text).ids
    cache = f"tokenprism {PREFIX} {manifest['build']}"
    used = {"pkg-general/tokenprism.js", "pkg-general/tokenprism_bg.wasm"}

    def open_file_and_check(page):
        page.get_by_test_id("tokenizer-file").set_input_files(str(path))
        page.wait_for_function(
            "() => document.querySelector('[data-testid=tokenizer] option[data-custom]')"
            "?.textContent.startsWith('t5.json ')",
            timeout=60_000,
        )
        page.get_by_test_id("mode-ids").check()
        page.get_by_test_id("input").fill(text)
        page.wait_for_function(
            "want => JSON.stringify([...document.querySelectorAll('[data-testid=token-id]')]"
            ".map((e) => Number(e.textContent))) === want",
            arg=json.dumps(want, separators=(",", ":")),
            timeout=60_000,
        )

    with served(DIST, plain=True) as base:
        with visit(browser, base) as (page, watch):
            wait_offline_copy(page)
            assert not used & {u.removeprefix(base) for u in page.evaluate(CACHED_URLS, cache)}
            # Under the service worker (the tokenizer's worker starts with the page), the first
            # file that needs the general module brings it into the cache.
            page.reload()
            wait_ready(page)
            open_file_and_check(page)
            poll(
                lambda: {u.removeprefix(base) for u in page.evaluate(CACHED_URLS, cache)},
                lambda have: used <= have,
                lambda have: sorted(used - have),
            )
            page.context.set_offline(True)
            page.reload()
            wait_ready(page)
            open_file_and_check(page)
        assert watch.problems == []


def test_picked_model_is_cached_on_first_use_and_works_offline(browser, manifest):
    import sentencepiece

    from paths import spm_model

    sp = sentencepiece.SentencePieceProcessor(model_file=str(spm_model("mistral-v3")))
    text = "offline model: Привет 東京 🙂"
    cache = f"tokenprism {PREFIX} {manifest['build']}"
    used = {"data/models/mistral/mistral-v3.model", "pkg-general/tokenprism_bg.wasm"}

    def check(page):
        page.wait_for_selector(
            '[data-testid="app"][data-model="mistral-v3"]',
            state="attached",
            timeout=READY_TIMEOUT_MS,
        )
        page.get_by_test_id("mode-ids").check()
        page.get_by_test_id("input").fill(text)
        page.wait_for_function(
            "want => JSON.stringify([...document.querySelectorAll('[data-testid=token-id]')]"
            ".map((e) => Number(e.textContent))) === want",
            arg=json.dumps(sp.encode(text), separators=(",", ":")),
            timeout=60_000,
        )

    with served(DIST, plain=True) as base:
        with visit(browser, base) as (page, watch):
            wait_offline_copy(page)
            page.reload()
            wait_ready(page)
            page.get_by_test_id("tokenizer").select_option("mistral-v3")
            check(page)
            poll(
                lambda: {u.removeprefix(base) for u in page.evaluate(CACHED_URLS, cache)},
                lambda have: used <= have,
                lambda have: sorted(used - have),
            )
            # Offline: the address names the model; its file and module come from the cache.
            page.wait_for_function("() => location.hash.startsWith('#s=')")
            page.context.set_offline(True)
            page.reload()
            wait_ready(page)
            check(page)
        assert watch.problems == []
