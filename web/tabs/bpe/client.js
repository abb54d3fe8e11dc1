// The page's side of the BPE tab's worker (worker.js beside this file): the worker (and with
// it the BPE wasm module) starts on the first request, i.e. when the BPE tab is first used.
// The tab's app.py reaches it through tpcore.

let worker = null;
const pending = new Map();
let nextId = 1;

function start() {
  worker = new Worker(new URL("worker.js", import.meta.url), { type: "module" });
  worker.onmessage = ({ data }) => {
    const entry = pending.get(data.id);
    if (!entry) return;
    if (data.progress) {
      entry.onProgress?.(...data.progress);
      return;
    }
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
export function bpeRequest(type, argsJson = "{}", onProgress = null, transfer = []) {
  if (!worker) start();
  const id = nextId++;
  const args = typeof argsJson === "string" ? JSON.parse(argsJson) : argsJson;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress });
    worker.postMessage({ id, type, ...args }, transfer);
  });
}

function showProgress(label, loaded, total) {
  const box = document.getElementById("bpe-progress");
  if (!box) return;
  box.hidden = false;
  box.textContent = `${label}: ${(loaded / 1e6).toFixed(1)}${total ? ` / ${(total / 1e6).toFixed(1)}` : ""} MB`;
}

// A built-in tokenizer by name, its download shown in #bpe-progress.
export async function bpeBuiltin(name) {
  const box = document.getElementById("bpe-progress");
  showProgress(`Downloading ${name}`, 0, 0);
  try {
    return await bpeRequest("builtin", JSON.stringify({ name }), (l, t) => showProgress(`Downloading ${name}`, l, t));
  } finally {
    if (box) box.hidden = true;
  }
}

// A tokenizer.json (BPE model) or .tiktoken file the user picked or dropped; read locally.
export async function bpeFile(input) {
  const file = input.files?.[0] ?? input;
  const bytes = new Uint8Array(await file.arrayBuffer());
  await bpeRequest("file", { name: file.name, bytes }, null, [bytes.buffer]);
  return file.name;
}
