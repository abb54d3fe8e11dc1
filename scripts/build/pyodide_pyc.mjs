// Compiles the page's Python modules to bytecode with the page's own Pyodide:
//
//     node scripts/build/pyodide_pyc.mjs PYODIDE_DIR OUT_DIR SRC_DIR
//
// Every .py file under SRC_DIR (web/: app.py, shell/, tabs/<tab>/) is compiled; compiling them
// is a large share of the page's Python start-up (Pyodide's interpreter runs the compiler in
// wasm). The files written keep their paths relative to SRC_DIR, OUT_DIR/DIR/NAME.TAG.pyc (TAG:
// Pyodide's cache tag, e.g. cpython-314), and are "checked hash" pycs: boot.js puts each in the
// __pycache__ beside its source, and Python uses one only while the hash of its source still
// matches, so a stale pyc costs a compile, never the wrong code (boot.js checks app.py's the
// same way).

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, outDir, srcDir] = process.argv.slice(2);
// The .py files under srcDir as paths relative to it, "/"-separated and sorted.
const files = readdirSync(srcDir, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith(".py"))
  .map((e) => relative(srcDir, join(e.parentPath ?? e.path, e.name)).split(sep).join("/"))
  .filter((path) => !path.split("/").includes("__pycache__"))
  .sort();
const { loadPyodide } = await import(pathToFileURL(`${pyodideDir}/pyodide.mjs`).href);
const py = await loadPyodide({ indexURL: `${pyodideDir}/` });
const tag = py.runPython("import sys; sys.implementation.cache_tag");
py.FS.mkdirTree("/tmp/src");
// As py_compile does, plus the flag for top-level await (app.py runs with runPythonAsync).
py.runPython(`
import ast, importlib.util
from importlib._bootstrap_external import _code_to_hash_pyc

def tokenprism_pyc(name):
    with open("/tmp/src/source.py", "rb") as f:
        source = f.read()
    code = compile(source, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    data = _code_to_hash_pyc(code, importlib.util.source_hash(source), checked=True)
    with open("/tmp/out.pyc", "wb") as f:
        f.write(data)
`);
for (const path of files) {
  py.FS.writeFile("/tmp/src/source.py", readFileSync(join(srcDir, path)));
  py.globals.get("tokenprism_pyc")(path);
  const out = join(outDir, `${path.replace(/\.py$/, "")}.${tag}.pyc`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, py.FS.readFile("/tmp/out.pyc"));
}
console.log(`${files.length} modules compiled (${tag})`);
