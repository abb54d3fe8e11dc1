// The Bench tab's worker: times tokenprism's WebAssembly builds on the bundled corpus slices
// (data/bench/<corpus>.json, a list of documents). Each build is its own wasm-bindgen glue
// module, imported by its URL, so each keeps its own instance: pkg (simd128, BERT), pkg-nosimd
// (scalar, BERT) and pkg-bpe (simd128, byte-level BPE, o200k_base).
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

import { loadBuiltinBpe } from "./bpe-files.js";
import { answerMessages, corpusLoader, hashOutputs, timePasses } from "./bench-hash.js";

const FAST = ["simd", "page_cache", "lazy_output", "fused"];

// The runs per tokenizer: which module, which fast paths off.
const CONFIGS = {
  bert: [
    { name: "wasm-simd", label: "wasm simd128", pkg: "pkg", off: null },
    { name: "wasm-scalar", label: "wasm scalar", pkg: "pkg-nosimd", off: null },
    ...FAST.map((f) => ({ name: `wasm-simd-no-${f}`, label: `simd128, ${f} off`, pkg: "pkg", off: f })),
  ],
  o200k: [{ name: "wasm-simd", label: "wasm simd128", pkg: "pkg-bpe", off: null }],
};

const cores = new Map(); // pkg -> glue module
const tokenizers = new Map(); // "tokenizer/config" -> instance
const corpus = corpusLoader(new URL("data/bench/", import.meta.url));
let bertJson = null;

async function core(pkg) {
  if (!cores.has(pkg)) {
    const glue = await import(new URL(`${pkg}/tokenprism.js`, import.meta.url).href);
    await glue.default({ module_or_path: new URL(`${pkg}/tokenprism_bg.wasm`, import.meta.url).href });
    cores.set(pkg, glue);
  }
  return cores.get(pkg);
}

function configOf(tokenizer, name) {
  const c = (CONFIGS[tokenizer] ?? []).find((x) => x.name === name);
  if (!c) throw new Error(`no run ${name} for ${tokenizer}`);
  return c;
}

async function tokenizerFor(tokenizer, name) {
  const key = `${tokenizer}/${name}`;
  if (tokenizers.has(key)) return tokenizers.get(key);
  const c = configOf(tokenizer, name);
  let tok;
  if (tokenizer === "bert") {
    const glue = await core(c.pkg);
    if (bertJson === null) {
      const r = await fetch(new URL("data/bert-base-uncased/tokenizer.json", import.meta.url));
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
    tok = await loadBuiltinBpe("o200k_base", undefined, import.meta.url);
  }
  tokenizers.set(key, tok);
  return tok;
}

// One pass: the function that processes one document, for the timed loop.
function passFn(tokenizer, tok, op) {
  if (op === "normalize") {
    if (tokenizer !== "bert") throw new Error(`${tokenizer} has no normalizer`);
    return (d) => tok.normalizeLen(d);
  }
  if (tokenizer === "bert") return (d) => tok.encodeIds(d, false);
  return (d) => tok.encodeOrdinary(d);
}

const handlers = {
  configs({ tokenizer }) {
    return (CONFIGS[tokenizer] ?? []).map(({ name, label }) => ({ name, label }));
  },
  async hash({ tokenizer, config, corpus: name, op }) {
    const tok = await tokenizerFor(tokenizer, config);
    const { docs, bytes } = await corpus(name);
    let outputs;
    if (op === "normalize") outputs = docs.map((d) => tok.normalize(d));
    else {
      const f = passFn(tokenizer, tok, op);
      outputs = docs.map(f);
    }
    const tokens = op === "encode" ? outputs.reduce((n, o) => n + o.length, 0) : null;
    return { sha256: await hashOutputs(outputs), tokens, bytes, documents: docs.length };
  },
  async time({ tokenizer, config, corpus: name, op, minMs }) {
    const tok = await tokenizerFor(tokenizer, config);
    const { docs, bytes } = await corpus(name);
    const { ms, passes, sink } = timePasses(docs, passFn(tokenizer, tok, op), minMs);
    return { ms, passes, bytes, sink };
  },
};

answerMessages(handlers);
