// The BPE tab's own thread: a module Web Worker holding the BPE wasm module (pkg-bpe) and one
// WasmBpeTokenizer. Started only when the BPE tab is first used. Messages: {id, type, ...} in;
// {id, progress: [loaded, total]} while a file downloads, then {id, ok, result | error}.

import { BPE_TOKENIZERS, loadBpeCore, loadBuiltinBpe } from "./files.js";

let tokenizer = null;

// A .tiktoken file has no pattern or special tokens of its own: its name says which encoding.
const TIKTOKEN_NAMES = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"];

function use(next) {
  tokenizer?.free();
  tokenizer = next;
  return true;
}

const handlers = {
  async builtin({ name }, progress) {
    if (!BPE_TOKENIZERS[name]) throw new Error(`unknown tokenizer ${name}`);
    return use(await loadBuiltinBpe(name, progress));
  },
  async file({ name, bytes }) {
    const core = await loadBpeCore();
    if (/\.tiktoken$/i.test(name)) {
      const base = name.replace(/^.*[\\/]/, "").replace(/\.tiktoken$/i, "");
      const known = TIKTOKEN_NAMES.find((n) => base === n) ?? TIKTOKEN_NAMES.find((n) => base.startsWith(n));
      if (!known) {
        throw new Error(
          `a .tiktoken file has no pattern of its own; name it after its encoding (${TIKTOKEN_NAMES.join(", ")})`,
        );
      }
      return use(core.WasmBpeTokenizer.fromTiktoken(known, bytes));
    }
    return use(new core.WasmBpeTokenizer(new TextDecoder().decode(bytes)));
  },
  // The trace cut to the first `cap` tokens (what the page draws), with every id and the
  // total count, so a long paste does not send megabytes of token records to Python.
  trace({ text, specials, cap = 3000 }) {
    const t0 = performance.now();
    const json = tokenizer.trace(text, specials);
    const ms = performance.now() - t0;
    const full = JSON.parse(json);
    const n = full.tokens.length;
    if (n <= cap) return { trace: json, ms };
    const ids = full.tokens.map((t) => t.id);
    full.tokens = full.tokens.slice(0, cap);
    full.segments = full.segments.filter((g) => g.first_token < cap);
    for (const g of full.segments) {
      let at = g.first_token;
      g.pre_tokens = g.pre_tokens.filter((p) => {
        const keep = at < cap;
        at += p.ids.length;
        return keep;
      });
    }
    full.total_tokens = n;
    full.ids = ids;
    return { trace: JSON.stringify(full), ms };
  },
  piece({ text }) {
    return tokenizer.tracePiece(text);
  },
  chat({ messages, generation }) {
    return tokenizer.chatParts(messages, generation);
  },
};

self.onmessage = async (event) => {
  const { id, type, ...args } = event.data;
  const progress = (loaded, total) => self.postMessage({ id, progress: [loaded, total] });
  try {
    if (!tokenizer && !["builtin", "file"].includes(type)) throw new Error("no BPE tokenizer loaded");
    const result = await handlers[type](args, progress);
    self.postMessage({ id, ok: true, result });
  } catch (err) {
    self.postMessage({ id, ok: false, error: String(err?.message ?? err) });
  }
};
