// The page's side of the byte-level BPE worker (worker.js beside this file): the worker (and
// with it the BPE wasm module) starts on the first request, i.e. when the Tokenize tab's chat
// section first shows (tabs/tokenize/chat.py reaches it through tpcore).

let worker = null;
const pending = new Map();
let nextId = 1;

function start() {
  worker = new Worker(new URL("worker.js", import.meta.url), { type: "module" });
  worker.onmessage = ({ data }) => {
    const entry = pending.get(data.id);
    if (!entry) return;
    pending.delete(data.id);
    if (data.ok) entry.resolve(data.result);
    else entry.reject(new Error(data.error));
  };
  worker.onerror = (e) => {
    for (const entry of pending.values()) entry.reject(new Error(`BPE worker: ${e.message}`));
    pending.clear();
  };
}

// One request; `argsJson` is a JSON object string (Python sends JSON, not proxies).
export function bpeRequest(type, argsJson = "{}") {
  if (!worker) start();
  const id = nextId++;
  const args = JSON.parse(argsJson);
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, type, ...args });
  });
}

// A built-in tokenizer by name (tabs/bpe/files.js), downloaded on first use.
export function bpeBuiltin(name) {
  return bpeRequest("builtin", JSON.stringify({ name }));
}
