// The page's side of the Files tab: a second instance of the tokenizer worker
// (tabs/tokenize/worker.js, running tabs/files/count.js), holding the same module, tokenizer
// and options as the tokenize tab's, so a long count never waits behind a trace and Cancel can
// throw it away (CoreWorker.cancel) without touching the tab's own. On the main thread this
// only moves a <progress> and a line of text; the tab's app.py reaches it through tpcore.

import { CoreWorker } from "../../shell/core-worker.js";

// The largest text the chunker takes from a file (the text box holds what it holds).
const CHUNK_FILE_LIMIT = 4_000_000;
const CUTS = ["paragraph", "sentence", "token", "end"];

function megabytes(n) {
  return (n / 1e6).toFixed(1);
}

// `core`: the tokenize tab's CoreWorker, whose kept state (init, load, configure) this
// worker mirrors; `url`: the worker module.
export function filesClient(core, url, onError) {
  let worker = null;
  let mirrored = null;
  let loaded = null; // the mirrored state's replay
  let chunkSource = null; // {name, text} of a file opened for the chunker
  let lastChunks = null; // {text, chunks} of the latest chunking, for the download

  // The worker, holding the tokenize tab's current tokenizer (started again when that changed).
  function ready() {
    const state = [...core.kept.entries()].filter(([key]) => !key.startsWith("load:"));
    const same =
      mirrored !== null &&
      mirrored.length === state.length &&
      state.every(([key, [, args]], i) => mirrored[i][0] === key && mirrored[i][1][1] === args);
    if (!same) {
      worker?.worker?.terminate();
      worker = new CoreWorker(url, { onError });
      loaded = Promise.all(state.map(([key, [type, args]]) => worker.request(type, args, { keep: key })));
      mirrored = state;
    }
    return loaded.then(() => worker);
  }

  // Counts a File: documents as `docs` says; the bar and status line follow. Resolves to the
  // result as JSON; rejects with a Cancelled error (err.cancelled) when cancel() stopped it.
  async function countFile(file, docs, barId, statusId) {
    const bar = document.getElementById(barId);
    const status = document.getElementById(statusId);
    bar.max = Math.max(file.size, 1);
    bar.value = 0;
    status.textContent = `Counting ${file.name}…`;
    const w = await ready();
    const t0 = performance.now();
    const onProgress = (done, total, tokens) => {
      const seconds = (performance.now() - t0) / 1000;
      bar.value = done;
      status.textContent =
        `${megabytes(done)} of ${megabytes(total)} MB · ${tokens.toLocaleString("en")} tokens so far` +
        (seconds > 0 ? ` · ${megabytes(done / seconds)} MB/s` : "");
    };
    const result = await w.request("countFile", { file, docs }, { onProgress });
    bar.value = bar.max;
    return JSON.stringify({ ...result, name: file.name, seconds: (performance.now() - t0) / 1000 });
  }

  function cancel() {
    worker?.cancel();
  }

  // A text file for the chunker, kept here (a text box holding megabytes costs seconds of
  // layout). Resolves to its size in bytes; rejects with the reason it cannot be used.
  async function openChunkFile(file) {
    if (file.size > CHUNK_FILE_LIMIT) {
      throw new Error(`${file.name} is ${megabytes(file.size)} MB; the chunker takes up to ${CHUNK_FILE_LIMIT / 1e6} MB`);
    }
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(await file.arrayBuffer());
    } catch {
      throw new Error(`${file.name} is not UTF-8 text`);
    }
    if (text === "") throw new Error(`${file.name} is empty`);
    chunkSource = { name: file.name, text };
    return file.size;
  }

  function closeChunkFile() {
    chunkSource = null;
  }

  // Chunks the opened file or the text of box `boxId`: JSON {chunks: [[tokens, cut], ...] (cut
  // a name), shown: [[text, tokens, cut], ...] for the chunks within the first `shown` chars
  // (the last one cut there), length and shown_length in UTF-16 units, source: a file's name}.
  async function chunk(boxId, maxTokens, shown) {
    const text = chunkSource?.text ?? document.getElementById(boxId).value;
    const w = await ready();
    const chunks = (await w.request("chunk", { text, maxTokens })).map(([s, e, n, cut]) => [s, e, n, CUTS[cut]]);
    lastChunks = { text, chunks };
    const limit = Math.min(shown, text.length);
    return JSON.stringify({
      chunks: chunks.map(([, , n, cut]) => [n, cut]),
      shown: chunks.filter(([s]) => s < limit).map(([s, e, n, cut]) => [text.slice(s, Math.min(e, limit)), n, cut]),
      length: text.length,
      shown_length: limit,
      source: chunkSource?.name ?? null,
    });
  }

  // The latest chunks as JSON Lines, {"text": ..., "tokens": n} a line, saved as a file.
  function downloadChunks() {
    if (!lastChunks) return false;
    const { text, chunks } = lastChunks;
    const lines = chunks.map(([s, e, n]) => `${JSON.stringify({ text: text.slice(s, e), tokens: n })}\n`);
    const url = URL.createObjectURL(new Blob(lines, { type: "application/jsonl" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = "chunks.jsonl";
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    return true;
  }

  return { countFile, cancel, openChunkFile, closeChunkFile, chunk, downloadChunks };
}
