// The built-in byte-level BPE tokenizers and how a worker loads one from the BPE module
// (pkg-bpe: WasmBpeTokenizer, WasmTrainer). Shared by every worker that needs BPE, so the
// list of files and the loading code exist once. Files are fetched only when first asked for.

import { fetchBytes } from "../../shell/core-worker.js";

// The bytes of a URL with progress, for the workers that import this file.
export { fetchBytes };

export const BPE_TOKENIZERS = {
  gpt2: { label: "GPT-2 (tokenizer.json)", url: "data/bpe/gpt2/tokenizer.json", kind: "json" },
  r50k_base: { label: "r50k_base (tiktoken)", url: "data/bpe/r50k_base.tiktoken", kind: "tiktoken" },
  p50k_base: { label: "p50k_base (tiktoken)", url: "data/bpe/p50k_base.tiktoken", kind: "tiktoken" },
  cl100k_base: { label: "cl100k_base (GPT-4)", url: "data/bpe/cl100k_base.tiktoken", kind: "tiktoken" },
  o200k_base: { label: "o200k_base (GPT-4o)", url: "data/bpe/o200k_base.tiktoken", kind: "tiktoken" },
  // o200k_base's ranks with harmony's special tokens (its chat template).
  o200k_harmony: { label: "o200k_harmony", url: "data/bpe/o200k_base.tiktoken", kind: "tiktoken" },
  qwen3: { label: "Qwen3 (tokenizer.json, 11 MB)", url: "data/bpe/qwen3/tokenizer.json", kind: "json" },
};

let bpeCore = null;
// The site's root (this file sits in tabs/bpe/): the module and the files are there.
const siteRoot = new URL("../../", import.meta.url).href;

// The BPE module's glue, instantiated once per worker. `base` is the site root as a URL.
export async function loadBpeCore(base = siteRoot) {
  if (!bpeCore) {
    const core = await import(new URL("pkg-bpe/tokenprism.js", base).href);
    await core.default({ module_or_path: new URL("pkg-bpe/tokenprism_bg.wasm", base).href });
    bpeCore = core;
  }
  return bpeCore;
}

// A built-in BPE tokenizer by name (a key of BPE_TOKENIZERS) as a WasmBpeTokenizer.
export async function loadBuiltinBpe(name, base = siteRoot) {
  const spec = BPE_TOKENIZERS[name];
  if (!spec) throw new Error(`unknown BPE tokenizer ${JSON.stringify(name)}`);
  const core = await loadBpeCore(base);
  const bytes = await fetchBytes(new URL(spec.url, base).href);
  if (spec.kind === "tiktoken") return core.WasmBpeTokenizer.fromTiktoken(name, bytes);
  return new core.WasmBpeTokenizer(new TextDecoder().decode(bytes));
}
