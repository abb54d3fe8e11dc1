// The Train tab's thread: a module Web Worker with the BPE wasm module (pkg-bpe, loaded via
// tabs/bpe/files.js). It trains in batches of merges and posts each batch as it comes, so the
// page draws the merges live; a "cancel" message is read between batches (the loop yields to the
// event queue after every batch). It also counts tokens and reads indentation tokens for the
// exercises, with every built-in tokenizer and the one just trained.
//
// Cancel is the page's to decide: it shows "cancelled" at the count it has drawn the moment
// Cancel is clicked, and tells this worker how many merges to keep. The page's drawing lags
// this loop (it handles every batch's message in Python, slower still on a loaded machine), so
// by then the trainer may be thousands of merges further, or done; the slot is then cut back to
// the kept merges before anything reads it (training is deterministic: training again up to
// that count makes exactly those merges).
//
// Messages in: {id, type, ...}. Out: {id, ok, result | error}, and while training
// {id, progress: {merges, count, initial, ms, wasmMs}}.

import { BPE_TOKENIZERS, fetchBytes, loadBpeCore, loadBuiltinBpe } from "../bpe/files.js";

const base = new URL("../../", import.meta.url).href; // the site's root
const trainers = {}; // slot -> its last training: {id, trainer, count, keep, merges, ...}
const early = new Map(); // train request id -> merges to keep, cancelled before its trainer existed
const tokenizers = {}; // name -> WasmBpeTokenizer / WasmTokenizer (promises)

// Yields to the worker's event queue (a message port, not setTimeout: no 4 ms clamp), so a
// cancel message that arrived during a batch is handled before the next one.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
function yieldToEvents() {
  return new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(0);
  });
}

// Batches grow while they are quick, so small jobs post often and big ones are not slowed
// by the messages (each batch at most about BATCH_MS of work).
const BATCH_MS = 30;

async function train(id, { slot, text, vocab, byteLevel, maxMerges = Infinity, tableRows = Infinity }) {
  const core = await loadBpeCore(base);
  trainers[slot]?.trainer.free();
  const t0 = performance.now();
  const trainer = new core.WasmTrainer(text, vocab, byteLevel);
  // keep: null, or the merge count a cancel keeps (slotJob cuts the trainer back to it).
  const job = {
    id, core, trainer, byteLevel, text, vocab, initial: trainer.initialVocabSize(), count: 0,
    keep: early.get(id) ?? null, merges: [],
  };
  early.delete(id);
  trainers[slot] = job;
  let wasmMs = performance.now() - t0;
  let batch = 1;
  const end = () => ({ count: Math.min(job.count, job.keep ?? Infinity), ms: performance.now() - t0, wasmMs, initial: job.initial });
  // job.trainer, not `trainer`: a cancel may have replaced it (see slotJob).
  while (job.keep === null && !job.trainer.finished() && job.count < maxMerges) {
    const b0 = performance.now();
    const merges = JSON.parse(job.trainer.step(Math.min(batch, maxMerges - job.count)));
    const took = performance.now() - b0;
    wasmMs += took;
    // Every merge stays here; the page gets only the rows its table draws, and the count.
    const room = Math.max(0, tableRows - job.merges.length);
    for (const m of merges) job.merges.push(m);
    job.count = job.trainer.mergeCount();
    self.postMessage({
      id, progress: { merges: merges.slice(0, room), count: job.count, initial: job.initial, ms: performance.now() - t0, wasmMs },
    });
    if (merges.length === 0) break;
    if (took < BATCH_MS / 2) batch = Math.min(batch * 2, 1 << 16);
    else if (took > BATCH_MS && batch > 1) batch = Math.max(1, batch >> 1);
    await yieldToEvents();
    // A newer training of the slot has freed this trainer: stop without touching it.
    if (trainers[slot] !== job) return { ...end(), state: "cancelled" };
  }
  if (job.keep !== null) return { ...end(), state: "cancelled" };
  const exhausted = job.count < maxMerges && job.initial + job.count < vocab;
  return { ...end(), state: exhausted ? "exhausted" : "done" };
}

// The slot's training, first cut back to the merges a cancel kept if it made more.
function slotJob(slot) {
  const job = trainers[slot];
  if (!job) throw new Error("nothing trained yet");
  if (job.keep !== null && job.count > job.keep) {
    job.trainer.free();
    job.trainer = new job.core.WasmTrainer(job.text, job.vocab, job.byteLevel);
    job.trainer.step(job.keep);
    job.count = job.trainer.mergeCount();
    job.merges.length = job.count;
  }
  return job;
}

async function bert() {
  tokenizers.bert ??= (async () => {
    const core = await loadBpeCore(base);
    const bytes = await fetchBytes(new URL("data/bert-base-uncased/tokenizer.json", base).href);
    return new core.WasmTokenizer(new TextDecoder().decode(bytes));
  })();
  return tokenizers.bert;
}

async function builtin(name) {
  tokenizers[name] ??= loadBuiltinBpe(name, base);
  return tokenizers[name];
}

// The trained result as something that encodes text: a WasmBpeTokenizer from its
// tokenizer.json (byte-level), or the chapter's tokenize() per word (chapter mode).
async function trainedEncoder(slot) {
  const job = slotJob(slot);
  if (job.byteLevel) {
    const core = await loadBpeCore(base);
    const key = `trained:${slot}:${job.trainer.mergeCount()}`;
    if (job.encoderKey !== key) {
      job.encoder?.free();
      job.encoder = new core.WasmBpeTokenizer(job.trainer.tokenizerJson());
      job.encoderKey = key;
    }
    return { spans: (text) => bpeSpans(job.encoder, text) };
  }
  return {
    spans: (text) => {
      // Chapter mode: each whitespace-separated word alone, with its end-of-word mark.
      const out = [];
      const enc = new TextEncoder();
      const re = /\S+/gu;
      let m;
      while ((m = re.exec(text))) {
        let at = enc.encode(text.slice(0, m.index)).length;
        for (const piece of JSON.parse(job.trainer.tokenize(m[0]))) {
          const n = enc.encode(piece.replace(/_$/, "")).length;
          out.push([at, at + n, piece]);
          at += n;
        }
      }
      return out;
    },
  };
}

// [start byte, end byte, text] of every token of a byte-level BPE encode (no special tokens).
function bpeSpans(tok, text) {
  const trace = JSON.parse(tok.trace(text));
  const out = [];
  let at = 0;
  const dec = new TextDecoder();
  for (const t of trace.tokens) {
    out.push([at, at + t.bytes.length, dec.decode(new Uint8Array(t.bytes))]);
    at += t.bytes.length;
  }
  return out;
}

// bert-base-uncased's tokens (no [CLS]/[SEP]) with their spans in bytes of the input.
function bertSpans(tok, text) {
  const trace = JSON.parse(tok.trace(text));
  const enc = new TextEncoder();
  // offsets are code point indexes into the input
  const cps = Array.from(text);
  const byteAt = [0];
  for (const c of cps) byteAt.push(byteAt[byteAt.length - 1] + enc.encode(c).length);
  const out = [];
  trace.tokens.forEach((token, k) => {
    const [s, e] = trace.offsets[k];
    if (trace.special_tokens_mask[k]) return;
    out.push([byteAt[s], byteAt[e], token]);
  });
  return out;
}

async function encoders(names, slot, report) {
  const out = {};
  for (const name of names) {
    report(name);
    if (name === "bert-base-uncased") {
      const t = await bert();
      out[name] = (text) => bertSpans(t, text);
    } else if (name === "trained") {
      if (!trainers[slot]) continue;
      const e = await trainedEncoder(slot);
      out[name] = e.spans;
    } else {
      const t = await builtin(name);
      out[name] = (text) => bpeSpans(t, text);
    }
  }
  return out;
}

const handlers = {
  async init() {
    await loadBpeCore(base);
    return Object.keys(BPE_TOKENIZERS);
  },
  train: (args, id) => train(id, args),
  // Stops training request `train` of `slot`, keeping its first `keep` merges (the ones the page
  // shows); it may still be training, or done, or (its wasm module still loading) not begun.
  cancel({ slot, train, keep }) {
    const job = trainers[slot];
    if (job?.id === train) job.keep = Math.min(keep, job.count);
    else early.set(train, keep);
    return true;
  },
  // All merges so far, as JSON [[left, right, count, new], ...].
  merges({ slot }) {
    return JSON.stringify(slotJob(slot).merges);
  },
  tokenize({ slot, word }) {
    return slotJob(slot).trainer.tokenize(word);
  },
  tokenizerJson({ slot }) {
    return slotJob(slot).trainer.tokenizerJson();
  },
  // Token spans of each text for each tokenizer: {name: {key: [[start, end, text], ...]}}.
  async spans({ names, texts, slot }, id) {
    const enc = await encoders(names, slot, (name) => self.postMessage({ id, progress: { loading: name } }));
    const out = {};
    for (const [name, f] of Object.entries(enc)) {
      out[name] = {};
      for (const [key, text] of Object.entries(texts)) out[name][key] = f(text);
    }
    return out;
  },
  // Token counts only (the same spans, without sending them all back).
  async counts({ names, texts, slot }, id) {
    const enc = await encoders(names, slot, (name) => self.postMessage({ id, progress: { loading: name } }));
    const out = {};
    for (const [name, f] of Object.entries(enc)) {
      out[name] = {};
      for (const [key, text] of Object.entries(texts)) out[name][key] = f(text).length;
    }
    return out;
  },
};

self.onmessage = async (event) => {
  const { id, type, ...args } = event.data;
  try {
    const result = await handlers[type](args, id);
    self.postMessage({ id, ok: true, result });
  } catch (err) {
    self.postMessage({ id, ok: false, error: String(err?.message ?? err) });
  }
};
