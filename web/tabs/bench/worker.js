// The Bench tab's worker: times tokenprism's WebAssembly builds on the bundled corpus slices
// (data/bench/<corpus>.json, a list of documents). Each build is its own wasm-bindgen glue
// module, imported by its URL, so each keeps its own instance: pkg (simd128, BERT), pkg-nosimd
// (scalar, BERT) and pkg-bpe (simd128, byte-level BPE, o200k_base).
//
// How text reaches wasm (a run's `pass`): "into" (the page's way) writes it into the module's
// input buffer with TextEncoder.encodeInto (shell/wasm-text.js), timed; "wbg" passes the string
// to a wasm-bindgen `&str` parameter (its glue copies it in a charCodeAt loop), timed;
// "resident" writes every document into wasm memory once, before the clock starts, so the
// run times the tokenizer alone.
//
// Messages: {id, type, ...} in, {id, ok, result | error} out.
//   configs {tokenizer}            -> [{name, label}] the runs the benchmark makes
//   hash {tokenizer, config, corpus, op}
//                                  -> {sha256, tokens, bytes}: one pass, output hashed the way
//                                     scripts/bench_worker.py hashes it (per document: u32 LE
//                                     count then the ids as u32 LE; for "normalize" the UTF-8
//                                     byte count then the text), so hashes compare with native
//   time {tokenizer, config, corpus, op, minMs}
//                                  -> {ms, passes, bytes}: whole passes until minMs elapsed
// tokenizer: "bert" (bert-base-uncased) or "o200k" (o200k_base); op: "encode" or "normalize".

import { loadBuiltinBpe, loadBpeCore } from "../bpe/files.js";
import { answerMessages, corpusLoader, hashOutputs, timePasses } from "./hash.js";
import { WasmText } from "../../shell/wasm-text.js";

const FAST = ["simd", "page_cache", "lazy_output", "fused"];

// The runs per tokenizer: which module, which fast paths off.
const CONFIGS = {
  bert: [
    { name: "wasm-simd", label: "wasm simd128", pkg: "pkg", off: null, pass: "into" },
    { name: "wasm-scalar", label: "wasm scalar", pkg: "pkg-nosimd", off: null, pass: "into" },
    ...FAST.map((f) => ({ name: `wasm-simd-no-${f}`, label: `simd128, ${f} off`, pkg: "pkg", off: f, pass: "into" })),
    { name: "wasm-simd-wbg", label: "simd128, wasm-bindgen string", pkg: "pkg", off: null, pass: "wbg" },
    { name: "wasm-simd-resident", label: "simd128, text in wasm memory", pkg: "pkg", off: null, pass: "resident" },
    { name: "wasm-scalar-resident", label: "scalar, text in wasm memory", pkg: "pkg-nosimd", off: null, pass: "resident" },
  ],
  o200k: [
    { name: "wasm-simd", label: "wasm simd128", pkg: "pkg-bpe", off: null, pass: "into" },
    { name: "wasm-simd-wbg", label: "simd128, wasm-bindgen string", pkg: "pkg-bpe", off: null, pass: "wbg" },
    { name: "wasm-simd-resident", label: "simd128, text in wasm memory", pkg: "pkg-bpe", off: null, pass: "resident" },
  ],
};

const cores = new Map(); // pkg -> {glue, text: its WasmText}
const tokenizers = new Map(); // "tokenizer/pkg/fast path off" -> instance
// The site's root (this file sits in tabs/bench/): the modules and the data are there.
const root = new URL("../../", import.meta.url).href;
const corpus = corpusLoader(new URL("data/bench/", root));
let bertJson = null;

async function core(pkg) {
  if (!cores.has(pkg)) {
    let glue;
    if (pkg === "pkg-bpe") glue = await loadBpeCore(root); // the instance loadBuiltinBpe uses
    else glue = await import(new URL(`${pkg}/tokenprism.js`, root).href);
    // Instantiates once; later calls return the same exports.
    const exports = await glue.default({ module_or_path: new URL(`${pkg}/tokenprism_bg.wasm`, root).href });
    cores.set(pkg, { glue, text: new WasmText(glue, exports.memory) });
  }
  return cores.get(pkg);
}

function configOf(tokenizer, name) {
  const c = (CONFIGS[tokenizer] ?? []).find((x) => x.name === name);
  if (!c) throw new Error(`no run ${name} for ${tokenizer}`);
  return c;
}

async function tokenizerFor(tokenizer, name) {
  const c = configOf(tokenizer, name);
  // Runs that differ only in how text is passed share an instance.
  const key = `${tokenizer}/${c.pkg}/${c.off}`;
  if (tokenizers.has(key)) return tokenizers.get(key);
  let tok;
  if (tokenizer === "bert") {
    const { glue } = await core(c.pkg);
    if (bertJson === null) {
      const r = await fetch(new URL("data/bert-base-uncased/tokenizer.json", root));
      if (!r.ok) throw new Error(`tokenizer.json: HTTP ${r.status}`);
      // Truncation and padding off, as in the native benchmark (`no_truncation()`,
      // `no_padding()`): bert-base-uncased's file truncates to 128 tokens otherwise.
      const config = await r.json();
      config.truncation = null;
      config.padding = null;
      bertJson = JSON.stringify(config);
    }
    tok = new glue.WasmTokenizer(bertJson);
    tok.setFastPaths(...FAST.map((f) => f !== c.off));
  } else {
    tok = await loadBuiltinBpe("o200k_base", root);
  }
  tokenizers.set(key, tok);
  return tok;
}

// The function that processes one document, for the timed loop: a string for "into" and
// "wbg" runs, a [start, len] range of the input buffer for "resident" ones.
function passFn(tokenizer, tok, op, pass, text) {
  if (op === "normalize" && tokenizer !== "bert") throw new Error(`${tokenizer} has no normalizer`);
  if (pass === "wbg") {
    if (op === "normalize") return (d) => tok.normalizeLen(d);
    if (tokenizer === "bert") return (d) => tok.encodeIds(d, false);
    return (d) => tok.encodeOrdinary(d);
  }
  let f;
  if (op === "normalize") f = (s, n) => tok.normalizeLenInput(s, n);
  else if (tokenizer === "bert") f = (s, n) => tok.encodeIdsInput(s, n, false);
  else f = (s, n) => tok.encodeOrdinaryInput(s, n);
  if (pass === "resident") return ([s, n]) => f(s, n);
  return (d) => f(0, text.write(d));
}

// What one pass iterates over: the documents, or for "resident" runs their ranges in the
// input buffer (written now, before any clock starts).
function passInputs(pass, text, docs) {
  return pass === "resident" ? text.writeAll(docs) : docs;
}

const handlers = {
  configs({ tokenizer }) {
    return (CONFIGS[tokenizer] ?? []).map(({ name, label }) => ({ name, label }));
  },
  async hash({ tokenizer, config, corpus: name, op }) {
    const tok = await tokenizerFor(tokenizer, config);
    const { docs, bytes } = await corpus(name);
    const c = configOf(tokenizer, config);
    const { text } = await core(c.pkg);
    let outputs;
    if (op === "normalize") {
      // The text itself is hashed; the timed pass's length must agree with it.
      outputs = docs.map((d) => tok.normalize(d));
      const f = passFn(tokenizer, tok, op, c.pass, text);
      const lens = passInputs(c.pass, text, docs).map(f);
      const enc = new TextEncoder();
      if (lens.some((n, i) => n !== enc.encode(outputs[i]).length)) throw new Error(`${config}: normalized length differs from normalize()`);
    } else {
      outputs = passInputs(c.pass, text, docs).map(passFn(tokenizer, tok, op, c.pass, text));
    }
    const tokens = op === "encode" ? outputs.reduce((n, o) => n + o.length, 0) : null;
    return { sha256: await hashOutputs(outputs), tokens, bytes, documents: docs.length };
  },
  async time({ tokenizer, config, corpus: name, op, minMs }) {
    const tok = await tokenizerFor(tokenizer, config);
    const { docs, bytes } = await corpus(name);
    const c = configOf(tokenizer, config);
    const { text } = await core(c.pkg);
    const f = passFn(tokenizer, tok, op, c.pass, text);
    const { ms, passes, sink } = timePasses(passInputs(c.pass, text, docs), f, minMs);
    return { ms, passes, bytes, sink };
  },
};

answerMessages(handlers);
