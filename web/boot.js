// Starts the page: loads Pyodide, the wasm core, the tokenizer file and the page's Python in
// parallel (Pyodide alone takes seconds), then hands control to app.py. The UI itself is
// Python; this file only wires the two runtimes together and reports progress and errors.

import { loadPyodide } from "./pyodide/pyodide.mjs";

const here = (path) => new URL(path, import.meta.url).href;
const app = document.getElementById("app");
const errorBox = document.getElementById("error");
const bar = document.getElementById("progress-bar");

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

async function fetchOk(path, as) {
  const response = await fetch(here(path));
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return as === "json" ? response.json() : response.text();
}

// One tiny module using a SIMD instruction: if the browser validates it, use the simd128 build.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253,
  15, 253, 98, 11,
]);

async function loadCore() {
  const simd = WebAssembly.validate(SIMD_PROBE);
  const dir = simd ? "pkg" : "pkg-nosimd";
  const glue = await import(here(`${dir}/tokenprism.js`));
  await glue.default({ module_or_path: here(`${dir}/tokenprism_bg.wasm`) });
  return { glue, simd };
}

async function loadPageCode() {
  const modules = await fetchOk("py-modules.json", "json");
  const sources = await Promise.all(modules.map((name) => fetchOk(name)));
  const app = await fetchOk("app.py");
  return { modules: modules.map((name, i) => [name, sources[i]]), app };
}

async function main() {
  const started = performance.now();
  const elapsed = document.getElementById("elapsed");
  const tick = setInterval(() => {
    elapsed.textContent = `${((performance.now() - started) / 1000).toFixed(1)} s`;
  }, 100);
  try {
    const [pyodide, core, tokenizerJson, code] = await Promise.all([
      phase("python", loadPyodide({ indexURL: here("pyodide/") })),
      phase("core", loadCore()),
      phase("vocab", fetchOk("data/bert-base-uncased/tokenizer.json")),
      phase("ui", loadPageCode()),
    ]);

    const tokenizer = new core.glue.WasmTokenizer(tokenizerJson);
    // One coarse call per input change: a JS call from Python costs ~13 us, so the whole
    // pipeline runs in wasm and comes back as one JSON string.
    pyodide.registerJsModule("tpcore", {
      trace: (text) => tokenizer.trace(text),
      show_error: showError,
    });

    const dir = "/home/pyodide/tokenprism_web";
    pyodide.FS.mkdirTree(dir);
    for (const [name, source] of code.modules) pyodide.FS.writeFile(`${dir}/${name}`, source);
    pyodide.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(dir)})`);
    await pyodide.runPythonAsync(code.app, { filename: "app.py" });

    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    document.getElementById("engine").textContent =
      `core: wasm${core.simd ? " simd128" : ""} · Pyodide ${pyodide.version} · ready in ${seconds} s`;
  } catch (err) {
    showError(err?.stack ?? err);
  } finally {
    clearInterval(tick);
  }
}

main();
