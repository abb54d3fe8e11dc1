// Starts the page: the tokenizer worker (its own wasm core), Pyodide, the tokenizer file and
// the page's Python load in parallel, then app.py (and through it each tab's app.py) takes
// over. The UI itself is Python; this file wires the runtimes together, reports progress and
// errors, and offers the Python a few coarse helpers (`tpcore`): a request to the worker, a
// DOM builder for the views' node trees, and pointer/caret look-ups that need the browser's
// layout.

import { loadPyodide } from "../pyodide/pyodide.mjs";
import { bpeBuiltin, bpeRequest } from "../tabs/bpe/client.js";
import { filesClient } from "../tabs/files/client.js";
import { CoreWorker } from "./core-worker.js";

// Paths relative to the site's root (this file sits in shell/), wherever the site is served.
const root = new URL("../", import.meta.url);
const here = (path) => new URL(path, root).href;
const app = document.getElementById("app");
const errorBox = document.getElementById("error");
const bar = document.getElementById("progress-bar");

// Theme first, before anything draws: "auto" follows prefers-color-scheme.
const THEMES = ["auto", "light", "dark"];
function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  const button = document.getElementById("theme");
  if (button) button.textContent = `Theme: ${theme}`;
}
let savedTheme = "auto";
try {
  savedTheme = localStorage.getItem("tokenprism-theme") ?? "auto";
} catch {
  // storage can be blocked; the default is fine
}
applyTheme(THEMES.includes(savedTheme) ? savedTheme : "auto");
document.getElementById("theme")?.addEventListener("click", () => {
  const next = THEMES[(THEMES.indexOf(document.documentElement.dataset.theme) + 1) % THEMES.length];
  applyTheme(next);
  try {
    localStorage.setItem("tokenprism-theme", next);
  } catch {
    // not remembered, still applied
  }
});

// The whitespace switch, for every tab's text views: spaces, tabs and newlines drawn as
// glyphs by shell/style.css (data-ws on the root), or left plain.
const wsBox = document.getElementById("ws-glyphs");
function applyWhitespace(glyphs) {
  document.documentElement.dataset.ws = glyphs ? "glyphs" : "plain";
  if (wsBox) wsBox.checked = glyphs;
}
let savedWhitespace = "glyphs";
try {
  savedWhitespace = localStorage.getItem("tokenprism-ws") ?? "glyphs";
} catch {
  // storage can be blocked; the default is fine
}
applyWhitespace(savedWhitespace !== "plain");
wsBox?.addEventListener("change", () => {
  applyWhitespace(wsBox.checked);
  try {
    localStorage.setItem("tokenprism-ws", wsBox.checked ? "glyphs" : "plain");
  } catch {
    // not remembered, still applied
  }
});

// Shows an error on the page; console-only errors go unnoticed by users.
function showError(message) {
  errorBox.hidden = false;
  const line = document.createElement("pre");
  line.textContent = String(message);
  errorBox.append(line);
  app.dataset.state = app.dataset.state === "ready" ? "ready" : "failed";
}

window.addEventListener("error", (e) => showError(e.error?.stack ?? e.message));
window.addEventListener("unhandledrejection", (e) => showError(e.reason?.stack ?? e.reason));

function phase(name, promise) {
  const item = document.querySelector(`[data-phase="${name}"]`);
  item.dataset.state = "running";
  return promise.then(
    (value) => {
      item.dataset.state = "done";
      bar.value += 1;
      return value;
    },
    (err) => {
      item.dataset.state = "failed";
      throw err;
    },
  );
}

// Python's runtime and the page's Python are fetched at low priority: with a few connections
// per host (HTTP/1.1) the tokenizer core's small files, which draw the first tokens, would
// otherwise wait behind them.
const BULK = { priority: "low" };

async function fetchOk(path, as) {
  const response = await fetch(here(path), BULK);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return as === "json" ? response.json() : as === "blob" ? response.blob() : response.text();
}

// Downloads `paths` in parallel through the browser's caches (HTTP cache, the service
// worker's), calling onBytes(received, total) as bytes arrive; the bytes are dropped. A later
// fetch of the same URL (Pyodide's own) is then answered from the cache, so the runtime's
// download shows progress without Pyodide knowing. Reusable for any big file a tab needs.
async function prefetchWithProgress(paths, onBytes) {
  const got = paths.map(() => 0);
  const totals = paths.map(() => 0);
  const report = () => onBytes(got.reduce((a, b) => a + b, 0), totals.reduce((a, b) => a + b, 0));
  await Promise.all(paths.map(async (path, i) => {
    const response = await fetch(here(path), BULK);
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    totals[i] = Number(response.headers.get("content-length")) || 0;
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      got[i] += value.length;
      report();
    }
  }));
}

function megabytes(got, total) {
  return `${(got / 1e6).toFixed(1)}${total ? ` / ${(total / 1e6).toFixed(1)}` : ""} MB`;
}

// Pyodide's memory after its own start-up (scripts/build/pyodide_snapshot.py, gzip): restoring it
// skips seconds of the interpreter bootstrapping itself. Optional: without it (or when
// Pyodide refuses it) Python starts the plain way.
const SNAPSHOT = "pyodide/snapshot.gz";

// The snapshot (null without one), downloaded and inflated by a worker (snapshot-worker.js);
// onBytes(received, total) as it arrives.
function fetchSnapshot(onBytes) {
  return new Promise((done) => {
    const worker = new Worker(here("shell/snapshot-worker.js"), { type: "module" });
    worker.onmessage = ({ data }) => {
      if ("bytes" in data) {
        worker.terminate();
        done(data.bytes);
      } else {
        onBytes(data.got, data.total);
      }
    };
    worker.onerror = () => {
      worker.terminate();
      done(null);
    };
    worker.postMessage({ url: here(SNAPSHOT) });
  });
}

// Pyodide: its wasm, standard library and memory snapshot (~18 MB) with progress, then its
// start-up (compile and init, from the cache). The times split for the load figures (README
// "The page").
async function startPyodide() {
  const label = document.getElementById("python-bytes");
  const bytes = [[0, 0], [0, 0]]; // [received, total] of the runtime's files, of the snapshot
  const report = (which) => (got, total) => {
    bytes[which] = [got, total];
    label.textContent = megabytes(bytes[0][0] + bytes[1][0], bytes[0][1] + bytes[1][1]);
  };
  const [snapshot] = await Promise.all([
    fetchSnapshot(report(1)),
    prefetchWithProgress(["pyodide/pyodide.asm.wasm", "pyodide/python_stdlib.zip", "pyodide/pyodide.asm.mjs"], report(0)),
  ]);
  times.pythonDownloaded = performance.now();
  // Pyodide's start-up holds the main thread for a while: let the core's first answer be
  // drawn first (on a fast network the download is the longer wait anyway).
  await firstShownGate;
  times.pythonStart = performance.now();
  label.textContent += " · starting";
  const indexURL = here("pyodide/");
  let py = null;
  if (snapshot) {
    try {
      py = await loadPyodide({ indexURL, _loadSnapshot: snapshot });
      // The snapshot's `random` was seeded when it was made: the same for every visitor.
      py.runPython("import sys; 'random' in sys.modules and sys.modules['random'].seed()");
      times.pythonSnapshot = true;
    } catch (err) {
      console.warn("tokenprism: Pyodide's snapshot was refused, starting it plainly:", err);
    }
  }
  py ??= await loadPyodide({ indexURL });
  times.pythonReady = performance.now();
  return py;
}

// One tiny module using a SIMD instruction: if the browser validates it, use the simd128 build.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253,
  15, 253, 98, 11,
]);
const simd = WebAssembly.validate(SIMD_PROBE);

// ------------------------------------------------------------------------------ the worker
// A crash of the wasm core (a Rust panic is a trap) restarts the worker with the same wasm
// module, tokenizer and options (core-worker.js); the page says so and carries on.

const crashBox = document.getElementById("core-crash");
function showCrash(message) {
  crashBox.hidden = false;
  crashBox.textContent =
    `The tokenizer core failed on that input (${message}). It has been restarted with the same ` +
    "tokenizer and options: edit the text to go on. (This is a bug; the link and the input " +
    "help to report it.)";
}

const core = new CoreWorker(here("tabs/tokenize/worker.js"), {
  onCrash: showCrash,
  onError: (message) => showError(`tokenizer worker: ${message}`),
});
// Requests that set the worker's state are replayed after a crash, in this order.
const KEEP = {
  init: { keep: "init" },
  load: { keep: "load", drop: ["configure"] },
  configure: { keep: "configure" },
};

// A load into a slot (the Compare tab's models, tabs/compare/app.py) is kept per slot, beside
// the tokenize tab's own tokenizer.
function request(type, args = {}, onProgress = undefined) {
  if (args.slot != null && type === "load") {
    return core.request(type, args, { keep: `load:${args.slot}`, onProgress });
  }
  if (type === "unload") core.kept.delete(`load:${args.slot}`);
  return core.request(type, args, { ...(KEEP[type] ?? {}), onProgress });
}
// The Files tab's worker: the same tokenizer in a worker of its own (tabs/files/client.js).
const files = filesClient(core, here("tabs/tokenize/worker.js"), (message) => showError(`files worker: ${message}`));
// For tests and the console: the wasm memory size of the BERT core, its crash count, its
// last requests (a bug report's best clue).
window.tokenprismCore = { request, crashes: () => core.crashes, recent: () => core.recent };

// ------------------------------------------------------------------------------ input size
// The largest input the page tokenizes: 4 MB of UTF-8. The worker turns the whole input into
// a trace (every stage's text, per-char runs, tokens) before cutting it to what is drawn:
// measured on 1 MB of English, +80 MB of wasm memory, 30 M chars of trace JSON and +130 MB of
// JS heap for the parsed trace, so ~250 MB per MB at the peak (README "The page"). 4 MB stays
// near 1 GB; 10 MB would need ~2.5 GB and can take the worker down. Larger pastes, drops
// and texts are refused with a message, never half-processed.
const INPUT_LIMIT = 4_000_000; // bytes of UTF-8
const FILE_LIMIT = 64_000_000; // bytes: a tokenizer file (o200k's is ~4 MB, Qwen3's ~11 MB)

// Whether `text` is over `limit` bytes of UTF-8 (stops counting as soon as it is).
function utf8Over(text, limit) {
  if (text.length > limit) return true; // every UTF-16 unit is at least one byte
  if (text.length * 3 <= limit) return false; // and at most three
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xe000 ? 2 : 3; // a pair: 2 + 2
    if (bytes > limit) return true;
  }
  return false;
}

function tooLarge(what) {
  const notice = document.getElementById("notice");
  notice.hidden = false;
  notice.textContent =
    `${what} is larger than the page's limit of ${INPUT_LIMIT / 1e6} MB of UTF-8 text, so it ` +
    "was not used. Tokenize a part of it, or use the Python package for whole files.";
}

let lastIds = new Uint32Array();

// ------------------------------------------------------------------------------ big pastes
// A text box holding a megabyte costs the browser seconds of layout on the main thread. So a
// paste that makes the text longer than BIG_INPUT is kept here instead; the box shows its
// first PREVIEW chars, read-only, and every request uses the whole text.

const BIG_INPUT = 100_000; // UTF-16 units
const PREVIEW = 5_000; // code points
const box = document.getElementById("input");
const bigBar = document.getElementById("big-input");
let bigText = null;
// The box is editable from the first paint, seconds before Python's UI runs: whatever the
// visitor types, pastes or drops meanwhile is theirs and wins over the default example and a
// link's text (app.py asks, and then leaves the box alone). The box may have been typed into
// before this module ran, hence the comparison.
let edited = box.value !== box.defaultValue;
box.addEventListener("input", () => {
  edited = true;
  earlyTrace()?.catch(earlyFailed);
});

function inputText() {
  return bigText ?? box.value;
}

function setBigText(text) {
  bigText = text;
  if (text === null) {
    box.readOnly = false;
    bigBar.hidden = true;
    return;
  }
  const preview = Array.from(text.slice(0, PREVIEW * 2)).slice(0, PREVIEW).join("");
  box.value = preview;
  box.readOnly = true;
  describeBigText(null);
  bigBar.hidden = false;
}

// The size comes back with the trace (counting UTF-8 bytes here would cost main-thread time).
function describeBigText(bytes) {
  document.getElementById("big-input-size").textContent =
    `Large input${bytes === null ? "" : ` (${bytes.toLocaleString("en")} bytes)`}. The box shows ` +
    `the first ${PREVIEW.toLocaleString("en")} characters, read-only; counts, times and tokens ` +
    "cover all of it.";
}

// Pasted or dropped text: big text goes to bigText, too big text is refused.
function insertText(event, pasted) {
  const current = inputText();
  const start = bigText === null ? box.selectionStart : current.length;
  const end = bigText === null ? box.selectionEnd : current.length;
  const size = current.length - (end - start) + pasted.length;
  if (size <= BIG_INPUT) return;
  event.preventDefault();
  const next = current.slice(0, start) + pasted + current.slice(end);
  if (utf8Over(next, INPUT_LIMIT)) {
    tooLarge(event.type === "drop" ? "The dropped text" : "The pasted text");
    return;
  }
  setBigText(next);
  box.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertFromPaste" }));
}
box.addEventListener("paste", (event) => insertText(event, event.clipboardData?.getData("text/plain") ?? ""));
box.addEventListener("drop", (event) => {
  if (event.dataTransfer?.files?.length) return; // a tokenizer file: app.py's
  insertText(event, event.dataTransfer?.getData("text/plain") ?? "");
});
document.getElementById("big-clear").addEventListener("click", () => {
  setBigText(null);
  box.value = "";
  box.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "deleteContent" }));
  box.focus();
});
document.getElementById("big-edit").addEventListener("click", () => {
  const text = bigText;
  setBigText(null);
  box.value = text; // slow for huge text, and the user asked for it
  box.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertReplacementText" }));
});

// ------------------------------------------------------------------------- the DOM builder

const SVG = "http://www.w3.org/2000/svg";
const SVG_TAGS = new Set(["svg", "g", "rect", "text", "tspan", "title", "line"]);
const TAGS = new Set([
  "div", "span", "section", "p", "h2", "h3", "ol", "ul", "li", "code", "dl", "dt", "dd", "a",
  "button", "mark", "optgroup", "option", ...SVG_TAGS,
]);
const ATTRIBUTE = /^(class|title|role|tabindex|data-[a-z-]+|aria-[a-z]+|href|x|y|width|height|rx|viewBox|label|value)$/;

// shell/dom.py's [tag, attrs, ...children] as DOM nodes. Text only ever becomes text nodes; tags
// and attribute names come from allow-lists, and links only to http(s) addresses.
function build(node, svg = false) {
  if (typeof node === "string") return document.createTextNode(node);
  const [tag, attrs, ...children] = node;
  if (!TAGS.has(tag)) throw new Error(`view: tag ${tag} is not allowed`);
  const inSvg = svg || tag === "svg";
  const element = inSvg ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (!ATTRIBUTE.test(name)) continue;
    if (name === "href") {
      const url = new URL(value, location.href);
      if (url.protocol !== "http:" && url.protocol !== "https:") continue;
    }
    element.setAttribute(name, value);
  }
  for (const child of children) element.appendChild(build(child, inSvg));
  return element;
}

function render(targetId, json) {
  const target = document.getElementById(targetId);
  const tree = JSON.parse(json);
  const nodes = tree.length === 0 || Array.isArray(tree[0]) ? tree : [tree];
  target.replaceChildren(...nodes.map((n) => build(n)));
}

// The stage char under (x, y): the data-s index of the span plus the code points before the
// caret in it; -1 when the point is not over a char of `container`.
function charAtPoint(containerId, x, y) {
  const container = document.getElementById(containerId);
  let node = null;
  let offset = 0;
  if (document.caretPositionFromPoint) {
    const pos = document.caretPositionFromPoint(x, y);
    if (pos) ({ offsetNode: node, offset } = pos);
  } else if (document.caretRangeFromPoint) {
    const range = document.caretRangeFromPoint(x, y);
    if (range) ({ startContainer: node, startOffset: offset } = range);
  }
  if (!node || node.nodeType !== Node.TEXT_NODE || !container?.contains(node)) return -1;
  const span = node.parentElement.closest("[data-s]");
  if (!span) return -1;
  // The caret sits between chars: take the char whose box holds x.
  const range = document.createRange();
  const text = node.data;
  for (const at of [offset, offset - 1]) {
    if (at < 0 || at >= text.length) continue;
    const end = at + (text.charCodeAt(at) >= 0xd800 && text.charCodeAt(at) < 0xdc00 ? 2 : 1);
    range.setStart(node, at);
    range.setEnd(node, end);
    for (const r of range.getClientRects()) {
      if (x >= r.left && x <= r.right && y >= r.top && y <= r.bottom) {
        return Number(span.dataset.s) + [...text.slice(0, at)].length;
      }
    }
  }
  return -1;
}

// Marks stage char `index` of `containerId` (CSS Custom Highlight API, so no DOM changes).
function highlightChar(containerId, index) {
  if (!globalThis.CSS?.highlights) return;
  CSS.highlights.delete("inspect");
  const container = document.getElementById(containerId);
  if (!container || index < 0) return;
  let span = null;
  for (const s of container.querySelectorAll("[data-s]")) {
    if (Number(s.dataset.s) <= index) span = s;
    else break;
  }
  const node = span?.firstChild;
  if (!node || node.nodeType !== Node.TEXT_NODE) return;
  const cps = [...node.data];
  const k = index - Number(span.dataset.s);
  if (k >= cps.length) return;
  const start = cps.slice(0, k).join("").length;
  const range = new Range();
  range.setStart(node, start);
  range.setEnd(node, start + cps[k].length);
  CSS.highlights.set("inspect", new Highlight(range));
}

// Hovering a token marks it everywhere it is drawn (text spans, id chips, WordPiece chips).
function highlightToken(k) {
  for (const e of document.querySelectorAll(".tok-hl")) e.classList.remove("tok-hl");
  if (k < 0) return;
  for (const e of document.querySelectorAll(`[data-t="${Number(k)}"]`)) e.classList.add("tok-hl");
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

// A visitor's tokenizer file, read here and never uploaded; `specJson` says how the worker
// reads it (shell/models.py's file_request).
async function loadFile(input, specJson) {
  const file = input.files?.[0] ?? input;
  if (file.size > FILE_LIMIT) {
    throw new Error(`${file.name} is ${(file.size / 1e6).toFixed(0)} MB; the limit is ${FILE_LIMIT / 1e6} MB`);
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  const info = await request("load", { ...JSON.parse(specJson), bytes });
  return JSON.stringify({ name: file.name, info });
}

// One of the page's models (shell/models.py): the worker downloads its file, with the progress
// beside the picker; the service worker keeps it for offline use.
// `statusId`: where the progress shows (default: beside the tokenize tab's picker).
const loading = new Map(); // status element id -> loads under way
async function loadModel(specJson, label, statusId = "model-progress") {
  const spec = JSON.parse(specJson);
  const status = document.getElementById(statusId);
  loading.set(statusId, (loading.get(statusId) ?? 0) + 1);
  status.hidden = false;
  status.textContent = `Downloading ${label}…`;
  const onProgress = (got, total) => {
    status.textContent = total && got >= total
      ? `Opening ${label} (${megabytes(got, 0)})…`
      : `Downloading ${label}: ${megabytes(got, total)}`;
  };
  try {
    return JSON.stringify(await request("load", { ...spec, url: here(spec.url) }, onProgress));
  } finally {
    // Several loads may share a status line (the Compare tab's): the last one clears it.
    loading.set(statusId, loading.get(statusId) - 1);
    if (loading.get(statusId) === 0) {
      status.hidden = true;
      status.textContent = "";
    }
  }
}

// --------------------------------------------------------------------------------- start up

// The page's Python: its modules' sources (paths relative to the site's root, as in web/) and,
// when the build made it (scripts/build/pyodide_pyc.mjs), their bytecode for __pycache__, which
// saves Python compiling them.
async function loadPageCode() {
  const { modules, bytecode } = await fetchOk("py-modules.json", "json");
  const fetchBytes = async (path) => new Uint8Array(await (await fetchOk(path, "blob")).arrayBuffer());
  const [sources, pycs, appSource] = await Promise.all([
    Promise.all(modules.map((name) => fetchOk(name))),
    Promise.all(bytecode.map((name) => fetchBytes(`pyc/${name}`))),
    fetchOk("app.py"),
  ]);
  return {
    modules: modules.map((name, i) => [name, sources[i]]),
    bytecode: bytecode.map((name, i) => [name, pycs[i]]),
    app: appSource,
  };
}

const BUILTIN = { kind: "json", url: here("data/bert-base-uncased/tokenizer.json") };
let firstShown; // resolves once the core's first answer is on screen (or cannot be)
const firstShownGate = new Promise((done) => { firstShown = done; });

// Until Python's UI takes over, the core alone answers for the box, under the progress: for
// the text the page opened with, then for the visitor's latest text whenever they change it.
// One request at a time, so fast typing sends one per answer, not one per key.
let pythonTookOver = false;
let earlyRun = null; // the request in flight
let earlyStale = false; // the text changed while it was in flight

function earlyTrace() {
  if (pythonTookOver) return null;
  if (earlyRun) {
    earlyStale = true; // asked again when this one is back
    return null;
  }
  const run = request("trace", { text: inputText(), cap: 200 }).then(({ trace }) => {
    if (pythonTookOver) return;
    const answer = JSON.parse(trace);
    document.getElementById("early").textContent =
      `While Python starts, the core already has the answer: ${answer.total.tokens} tokens, ` +
      `ids ${JSON.stringify(answer.ids.slice(0, 40))}${answer.total.tokens > 40 ? "…" : ""}`;
    times.firstResult ??= performance.now();
  });
  earlyRun = run;
  const next = () => {
    earlyRun = null;
    if (earlyStale) {
      earlyStale = false;
      earlyTrace()?.catch(earlyFailed);
    }
  };
  run.then(next, next);
  return run;
}

// A crash of the core on typed text is already on the page (showCrash); anything else is a bug.
function earlyFailed(err) {
  if (!err?.crashed) showError(err?.stack ?? err);
}

async function loadCore() {
  // Sent together: the worker runs them in order, fetching the file itself, so the first
  // answer needs the main thread only to be drawn (Pyodide's start-up holds it for seconds).
  const label = document.getElementById("vocab-bytes");
  const init = request("init", { pkg: simd ? "pkg" : "pkg-nosimd" });
  const load = request("load", BUILTIN, (got, total) => { label.textContent = megabytes(got, total); });
  // The core answers before Python is ready: a first result while the UI still loads (for
  // the text in the box; a link's text is Python's to decode, unless typed over already).
  const firstTrace = location.hash && !edited ? null : earlyTrace();
  try {
    await init;
    times.coreStarted = performance.now();
    const info = await load;
    times.coreLoaded = performance.now();
    // The first answer, or one the visitor's typing asked for while the core was loading.
    await (firstTrace ?? earlyRun);
    return info;
  } finally {
    firstShown();
  }
}

// Runs app.py (DIR: its folder) in __main__, from its bytecode when that is there and made
// from this very source (a "checked hash" pyc, as the import system checks the modules'),
// else from the source. Either way compiled for top-level await, as runPythonAsync does.
const RUN_APP = `
import ast as _ast, importlib.util as _util, marshal as _marshal, sys as _sys
with open("DIR/app.py", "rb") as _f:
    _source = _f.read()
try:
    with open(f"DIR/__pycache__/app.{_sys.implementation.cache_tag}.pyc", "rb") as _f:
        _pyc = _f.read()
except OSError:
    _pyc = b""
if _pyc[:4] == _util.MAGIC_NUMBER and _pyc[4:8] == b"\\x03\\0\\0\\0" and _pyc[8:16] == _util.source_hash(_source):
    _code = _marshal.loads(_pyc[16:])
else:
    _code = compile(_source, "app.py", "exec", flags=_ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
del _ast, _util, _marshal, _sys, _f, _source, _pyc
_code = eval(_code)
if _code is not None:
    await _code
del _code
`;

// Load figures for tests and curious visitors (milliseconds since navigation start).
const times = (window.tokenprismTimes = {});

async function main() {
  const started = performance.now();
  const elapsed = document.getElementById("elapsed");
  const tick = setInterval(() => {
    elapsed.textContent = `${((performance.now() - started) / 1000).toFixed(1)} s`;
  }, 100);
  try {
    const [pyodide, info, code] = await Promise.all([
      phase("python", startPyodide()),
      phase("core", loadCore()),
      phase("ui", loadPageCode()),
    ]);

    pyodide.registerJsModule("tpcore", {
      request: (type, args) => request(type, args?.toJs ? args.toJs({ dict_converter: Object.fromEntries }) : args),
      // The text box's text goes to the worker straight from JS (no copy through Python).
      // Fails with "tokenprism: ..." (app.py then just stops) when the text is over the limit
      // or the core crashed on it; the page already says which.
      trace_input: async (cap) => {
        const text = inputText();
        if (utf8Over(text, INPUT_LIMIT)) {
          tooLarge("The text");
          throw new Error("tokenprism: input over the size limit");
        }
        let reply;
        try {
          reply = await request("trace", { text, cap });
        } catch (err) {
          if (err.crashed) throw new Error(`tokenprism: ${err.message}`);
          throw err;
        }
        const { trace, ids, bytes } = reply;
        crashBox.hidden = true;
        lastIds = ids;
        if (bigText !== null && text === bigText) describeBigText(bytes);
        return trace;
      },
      input_length: () => inputText().length,
      input_text: inputText,
      // Whether the visitor changed the text before Python's UI took over (see `edited`).
      input_edited: () => edited,
      set_input: (text) => {
        // Keys that were waiting while Python started land after this: a visitor who had
        // selected the whole text, to type over it, still has all of it selected.
        const whole = document.activeElement === box && box.value.length > 0 &&
          box.selectionStart === 0 && box.selectionEnd === box.value.length;
        setBigText(null);
        box.value = text;
        if (whole) box.select();
      },
      builtin_info: () => JSON.stringify(info),
      load_file: loadFile,
      load_model: loadModel,
      fetch_text: (path) => fetchOk(path),
      render,
      char_at_point: charAtPoint,
      highlight_char: highlightChar,
      highlight_token: highlightToken,
      copy_text: copyText,
      copy_ids: () => copyText(JSON.stringify(Array.from(lastIds))),
      show_error: showError,
      // The byte-level BPE worker (tabs/bpe/client.js: the chat templates), started on its
      // first use.
      bpe_request: (type, argsJson) => bpeRequest(type, argsJson),
      bpe_builtin: bpeBuiltin,
      // The Files tab (tabs/files/client.js): counts of a whole file, chunks of a text.
      count_file: files.countFile,
      cancel_count: files.cancel,
      chunk_open_file: files.openChunkFile,
      chunk_close_file: files.closeChunkFile,
      chunk_text: files.chunk,
      chunk_download: files.downloadChunks,
    });

    // The modules keep their folders (packages: shell/, tabs/<tab>/), as under web/.
    const dir = "/home/pyodide/tokenprism_web";
    const write = (path, data) => {
      pyodide.FS.mkdirTree(`${dir}/${path}`.replace(/\/[^/]*$/, ""));
      pyodide.FS.writeFile(`${dir}/${path}`, data);
    };
    for (const [path, source] of code.modules) write(path, source);
    // "Checked hash" pycs: Python takes one only if its source's hash still matches. Each goes
    // to the __pycache__ beside its source (pyc/shell/dom.TAG.pyc: shell/__pycache__/dom.TAG.pyc).
    for (const [path, pyc] of code.bytecode) write(path.replace(/[^/]*$/, "__pycache__/$&"), pyc);
    write("app.py", code.app);
    pyodide.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(dir)})`);
    times.appStart = performance.now();
    // From here app.py answers for the box (its handlers are added before anything awaits).
    pythonTookOver = true;
    await pyodide.runPythonAsync(RUN_APP.replaceAll("DIR", dir), { filename: "boot.js" });

    times.ready = performance.now();
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    document.getElementById("engine").textContent =
      `core: wasm${simd ? " simd128" : ""} (in a worker) · Pyodide ${pyodide.version} · ready in ${seconds} s`;
  } catch (err) {
    showError(err?.stack ?? err);
  } finally {
    clearInterval(tick);
  }
}

main();
