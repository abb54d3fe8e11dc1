// Compiles the page's Python modules to bytecode with the page's own Pyodide (issue #8):
//
//     node scripts/build/pyodide_pyc.mjs PYODIDE_DIR OUT_DIR file.py [file.py ...]
//
// Compiling app.py, view.py, bpe_app.py and the rest is a large share of the page's Python
// start-up (Pyodide's interpreter runs the compiler in wasm). The files written, OUT_DIR/NAME.TAG.pyc
// (TAG: Pyodide's cache tag, e.g. cpython-314), are "checked hash" pycs: boot.js puts them
// in __pycache__ beside the sources, and Python uses one only while the hash of its source
// still matches, so a stale pyc costs a compile, never the wrong code (boot.js checks
// app.py's the same way).

import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { basename } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, outDir, ...files] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(`${pyodideDir}/pyodide.mjs`).href);
const py = await loadPyodide({ indexURL: `${pyodideDir}/` });
const tag = py.runPython("import sys; sys.implementation.cache_tag");
mkdirSync(outDir, { recursive: true });
py.FS.mkdirTree("/tmp/src");
// As py_compile does, plus the flag for top-level await (app.py runs with runPythonAsync).
py.runPython(`
import ast, importlib.util
from importlib._bootstrap_external import _code_to_hash_pyc

def tokenprism_pyc(name):
    with open("/tmp/src/" + name, "rb") as f:
        source = f.read()
    code = compile(source, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    data = _code_to_hash_pyc(code, importlib.util.source_hash(source), checked=True)
    with open("/tmp/out.pyc", "wb") as f:
        f.write(data)
`);
for (const file of files) {
  const name = basename(file);
  py.FS.writeFile(`/tmp/src/${name}`, readFileSync(file));
  py.globals.get("tokenprism_pyc")(name);
  writeFileSync(`${outDir}/${name.replace(/\.py$/, "")}.${tag}.pyc`, py.FS.readFile("/tmp/out.pyc"));
}
console.log(`${files.length} modules compiled (${tag})`);
