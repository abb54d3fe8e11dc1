// Compiles the page's Python modules to bytecode with the page's own Pyodide (issue #8):
//
//     node scripts/pyodide_pyc.mjs PYODIDE_DIR OUT_DIR file.py [file.py ...]
//
// Compiling view.py, bpe_app.py and the rest is a large share of the page's Python start-up
// (Pyodide's interpreter runs the compiler in wasm). The files written, OUT_DIR/NAME.TAG.pyc
// (TAG: Pyodide's cache tag, e.g. cpython-314), are "checked hash" pycs: boot.js puts them
// in __pycache__ beside the sources, and Python uses one only while the hash of its source
// still matches, so a stale pyc costs a compile, never the wrong code.

import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { basename } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, outDir, ...files] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(`${pyodideDir}/pyodide.mjs`).href);
const py = await loadPyodide({ indexURL: `${pyodideDir}/` });
const tag = py.runPython("import sys; sys.implementation.cache_tag");
mkdirSync(outDir, { recursive: true });
py.FS.mkdirTree("/tmp/src");
for (const file of files) {
  const name = basename(file);
  py.FS.writeFile(`/tmp/src/${name}`, readFileSync(file));
  py.runPython(`
import py_compile
py_compile.compile("/tmp/src/${name}", cfile="/tmp/out.pyc", dfile="${name}", doraise=True,
                   invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)`);
  writeFileSync(`${outDir}/${name.replace(/\.py$/, "")}.${tag}.pyc`, py.FS.readFile("/tmp/out.pyc"));
}
console.log(`${files.length} modules compiled (${tag})`);
