// The byte-level BPE thread: a module Web Worker holding the BPE wasm module (pkg-bpe) and one
// WasmBpeTokenizer, for the Tokenize tab's chat templates. Started when first needed.
// Messages: {id, type, ...} in ("builtin" loads a tokenizer, "chat" encodes a chat with its
// template); {id, ok, result | error} out.

import { BPE_TOKENIZERS, loadBuiltinBpe } from "./files.js";

let tokenizer = null;

function use(next) {
  tokenizer?.free();
  tokenizer = next;
  return true;
}

const handlers = {
  async builtin({ name }) {
    if (!BPE_TOKENIZERS[name]) throw new Error(`unknown tokenizer ${name}`);
    return use(await loadBuiltinBpe(name));
  },
  chat({ messages, generation }) {
    return tokenizer.chatParts(messages, generation);
  },
};

self.onmessage = async (event) => {
  const { id, type, ...args } = event.data;
  try {
    if (!tokenizer && type !== "builtin") throw new Error("no BPE tokenizer loaded");
    const result = await handlers[type](args);
    self.postMessage({ id, ok: true, result });
  } catch (err) {
    self.postMessage({ id, ok: false, error: String(err?.message ?? err) });
  }
};
