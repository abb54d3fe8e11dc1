// The tokenizer's own thread: a module Web Worker with its own instance of the wasm core (the
// BERT module, and the general one once a tokenizer file needs it).
// Every encode runs here, so a 1 MB paste never blocks the page; what comes back is the
// trace cut to what the page draws (the first `cap` input chars), with counts and timings
// of the whole input. Messages: {id, type, ...} in, {id, ok, result | error} out; a wasm trap
// (a Rust panic) answers {crashed: true} and the page starts a fresh worker
// (shell/core-worker.js).

import { fetchBytes, serveCore } from "../../shell/core-worker.js";
import { corpusLoader } from "../bench/hash.js";
import { chunkText, countFile as count } from "../files/count.js";

// The site's root (this file sits in tabs/tokenize/): the wasm packages are there.
const root = new URL("../../", import.meta.url);
const corpus = corpusLoader(new URL("data/bench/", root));

// The module for every other tokenizer.json (any normalizer, pre-tokenizer and model, with a
// regex engine): about twice the BERT module's size, so it is fetched only when a file the
// BERT module refuses as unsupported is loaded, and a load that works in the BERT module (the
// built-in file, say) goes back to that one. Built with simd128 only.
const GENERAL = "pkg-general";

let initial = null; // the package init named: BERT, with or without simd128
const modules = new Map(); // package -> {core: the wasm-bindgen glue, wasm: its exports}
let current = null; // the package the tokenizer belongs to
let tokenizer = null;
// The core's "no id" in the numbers it returns (u32::MAX).
const NO_ID = 0xffffffff;
// Tokenizers beside the tokenize tab's own, by slot (the Compare tab's models, one per model):
// slot -> {pkg, tokenizer}.
const slots = new Map();

// The first n code points of s (JS strings index UTF-16 units).
function cpPrefix(s, n) {
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c < 0xdc00 && i + 1 < s.length ? 2 : 1;
  }
  return s.slice(0, i);
}

function cpCount(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!(c >= 0xdc00 && c < 0xe000)) n++;
  }
  return n;
}

// The input char index of chars inserted before the text (crate::normalizers::aligned::AT_START).
const AT_START = 0xffffffff;

// How many chars of a stage come from input chars below `cap`, and its runs cut there.
function cutRuns(runs, cap) {
  const out = [];
  let count = 0;
  for (const [first, len, step] of runs) {
    // Chars a normalizer put before the text (Prepend) come first and from no input char.
    const inserted = first === AT_START;
    if (first >= cap && !inserted) break;
    const keep = step === 0 || inserted ? len : Math.min(len, cap - first);
    out.push([first, keep, step]);
    count += keep;
    if (keep < len) break;
  }
  return { runs: out, count };
}

function utf8Length(s) {
  return new TextEncoder().encode(s).length;
}

function trim(trace, text, cap) {
  const chars = cpCount(text);
  const total = {
    chars,
    bytes: utf8Length(text),
    tokens: trace.ids.length,
    unk: trace.tokens.filter((t) => t === "[UNK]").length,
    truncated: chars > cap,
    shown_chars: Math.min(chars, cap),
  };
  trace.total = total;
  delete trace.alignment; // the stages' runs carry it
  if (chars <= cap) return trace;
  for (const stage of trace.stages) {
    const { runs, count } = cutRuns(stage.runs, cap);
    stage.runs = runs;
    stage.text = cpPrefix(stage.text, count);
  }
  const n = trace.ids.length;
  const keep = [];
  for (let k = 0; k < n; k++) {
    const [start, end] = trace.offsets[k];
    const special = trace.special_tokens_mask[k] && start === end;
    if (start < cap || (special && k === 0)) keep.push(k);
  }
  for (const key of ["tokens", "ids", "offsets", "special_tokens_mask"]) {
    trace[key] = keep.map((k) => trace[key][k]);
  }
  trace.pre_tokens = trace.pre_tokens.filter((p) => p.offsets[0] < cap);
  for (const stage of trace.pre_tokenizer_stages) {
    stage.pieces = stage.pieces.filter((p) => p.offsets[0] < cap);
  }
  if (trace.fast) {
    const capBytes = utf8Length(cpPrefix(text, cap));
    trace.fast.stats.blocks = trace.fast.stats.blocks.filter(([at]) => at < capBytes);
  }
  return trace;
}

// The worker's clock step in µs: the smallest gap between two different performance.now()
// readings (Chromium: 5 µs when cross-origin isolated, 100 µs otherwise).
let resolution = null;
function clockResolution() {
  if (resolution === null) {
    let best = Infinity;
    let last = performance.now();
    for (let seen = 0; seen < 20; ) {
      const t = performance.now();
      if (t !== last) {
        best = Math.min(best, t - last);
        last = t;
        seen++;
      }
    }
    resolution = best * 1000;
  }
  return resolution;
}

// A short input's steps take less than a clock step, so one run shows the clock, not the
// step: then the steps are timed over many runs, in BATCHES batches, within REPEAT_MS.
const REPEAT_MS = 50;
const BATCHES = 9;
// A step this many clock steps long is measured well enough by one run.
const ENOUGH_TICKS = 100;

function quantile(sorted, q) {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

// Sets the trace's step times to the median per run over batches of repeated runs, and
// trace.timing to how they were measured: {runs, batches, resolution_us, spread}, spread
// being each step's interquartile range over the batches (stages, pre-tokenizer, model).
function timeSteps(text, trace) {
  const res = clockResolution();
  const single = [...trace.stages.slice(1).map((s) => s.micros), trace.pre_tokenize_micros, trace.model_micros];
  trace.timing = { runs: 1, batches: 1, resolution_us: res, spread: null };
  // A long input: too slow to repeat, and its steps are long enough to see anyway.
  const long = (trace.micros / 1000) * 2 * BATCHES > REPEAT_MS;
  if (text === "" || long || single.every((m) => m >= ENOUGH_TICKS * res)) return;
  const width = trace.stages.length + 3;
  const start = performance.now();
  tokenizer.stepMicros(text, 4);
  const perRun = Math.max((performance.now() - start) / 4, 0.001);
  const perBatch = Math.floor(REPEAT_MS / BATCHES / perRun);
  if (perBatch < 2) return;
  const means = [];
  for (let b = 0; b < BATCHES && performance.now() - start < REPEAT_MS; b++) {
    const rows = tokenizer.stepMicros(text, perBatch);
    const sum = new Float64Array(width);
    for (let i = 0; i < rows.length; i++) sum[i % width] += rows[i];
    means.push(sum.map((v) => v / perBatch));
  }
  if (means.length < 3) return;
  const stats = Array.from({ length: width }, (_, j) => {
    const sorted = means.map((m) => m[j]).sort((a, b) => a - b);
    return [quantile(sorted, 0.5), quantile(sorted, 0.25), quantile(sorted, 0.75)];
  });
  trace.stages.forEach((s, j) => (s.micros = stats[j][0]));
  const n = trace.stages.length;
  [trace.pre_tokenize_micros, trace.model_micros, trace.micros] = [stats[n][0], stats[n + 1][0], stats[n + 2][0]];
  trace.timing = {
    runs: perBatch * means.length,
    batches: means.length,
    resolution_us: res,
    spread: stats.slice(0, n + 2).map(([, q1, q3]) => [q1, q3]),
  };
}

function info(tok = tokenizer, pkg = current) {
  return { ...JSON.parse(tok.info()), module: pkg };
}

// Starts wasm package `pkg` once per worker.
async function start(pkg) {
  if (!modules.has(pkg)) {
    // The module's bytes are fetched while its glue loads: one round trip fewer to the first answer.
    const bytes = fetch(new URL(`${pkg}/tokenprism_bg.wasm`, root).href);
    const core = await import(new URL(`${pkg}/tokenprism.js`, root).href);
    modules.set(pkg, { core, wasm: await core.default({ module_or_path: bytes }) });
  }
  return modules.get(pkg).core;
}

// A tokenizer from a file's contents: `data` is text for a tokenizer.json or vocab.txt, bytes
// for a SentencePiece .model or a .tiktoken file (of the encoding `name`).
function construct(core, { kind, name }, data) {
  switch (kind) {
    case "vocab":
      return core.WasmTokenizer.fromVocabTxt(data);
    case "model":
      return core.WasmTokenizer.fromSentencePiece(data);
    case "tiktoken":
      return core.WasmTokenizer.fromTiktoken(name, data);
    default:
      return new core.WasmTokenizer(data);
  }
}

function generalModule(why) {
  if (initial.endsWith("nosimd")) {
    throw new Error(`${why}; the module that reads such files needs WebAssembly SIMD, which this browser lacks`);
  }
  return GENERAL;
}

// The tokenizer for a file: in the general module when the file's kind needs it (module
// "general"), else in the initial module, or (when that refuses something in the file as
// unsupported) in the general module, whose error, if it refuses too, is the one reported: it
// names what no module supports. Returns [package, tokenizer].
async function openAnywhere(spec, data) {
  if (spec.module === "general") {
    const pkg = generalModule(`${spec.kind} files are read by the general module`);
    return [pkg, construct(await start(pkg), spec, data)];
  }
  try {
    return [initial, construct(await start(initial), spec, data)];
  } catch (err) {
    if (err instanceof WebAssembly.RuntimeError || !String(err?.message).startsWith("unsupported:")) throw err;
    const pkg = generalModule(err.message);
    return [pkg, construct(await start(pkg), spec, data)];
  }
}

// The file's contents as construct() takes them: bytes stay bytes for the binary kinds.
function contents(spec, bytes) {
  if (spec.kind === "model" || spec.kind === "tiktoken") return bytes;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new Error("the file is not UTF-8 text (a tokenizer.json, tekken.json or vocab.txt is)");
  }
}

const handlers = {
  async init({ pkg }) {
    initial = pkg;
    await start(pkg);
    return true;
  },
  // A tokenizer from a file: its text (`text`), its bytes (`bytes`) or its URL (`url`, fetched
  // here, so the page's main thread is not needed until the answer; the download starts when
  // the request arrives, beside the module's own start, and reports its progress). `kind`,
  // `module` and `name` say how to read it (shell/models.py). Replayed after a crash, it picks
  // the same module again.
  // With a `slot`, the tokenizer goes to that slot and the tab's own stays.
  load: Object.assign(async (spec, progress, early) => {
    const data = spec.text ?? contents(spec, early ?? spec.bytes);
    const [pkg, next] = await openAnywhere(spec, data);
    if (spec.slot != null) {
      slots.get(spec.slot)?.tokenizer.free();
      slots.set(spec.slot, { pkg, tokenizer: next });
      return info(next, pkg);
    }
    tokenizer?.free();
    tokenizer = next;
    current = pkg;
    return info();
  }, { early: ({ url }, progress) => (url ? fetchBytes(new URL(url, root).href, progress) : null) }),
  configure({ options, fast }) {
    if (options) tokenizer.setNormalizerOptions(...options);
    if (fast) tokenizer.setFastPaths(...fast);
    return info();
  },
  unload({ slot }) {
    slots.get(slot)?.tokenizer.free();
    return slots.delete(slot);
  },
  // The vocabulary entries of `slot`'s tokenizer whose text does not encode back to them
  // (the Quirks tab): JSON with their count and the first `limit`.
  roundTrip({ slot, limit }) {
    const tok = slots.get(slot)?.tokenizer;
    if (!tok) throw new Error(`no tokenizer in slot ${slot}`);
    return tok.roundTripMisses(limit);
  },
  // The vocabulary entries the bundled corpora (data/bench/, the Bench tab's slices) never
  // produce, each document encoded alone.
  async neverProduced({ slot, limit }) {
    const tok = slots.get(slot)?.tokenizer;
    if (!tok) throw new Error(`no tokenizer in slot ${slot}`);
    const index = await (await fetch(new URL("data/bench/index.json", root))).json();
    const names = Object.keys(index.corpora ?? {});
    const docs = [];
    let bytes = 0;
    for (const name of names) {
      const c = await corpus(name);
      docs.push(...c.docs);
      bytes += c.bytes;
    }
    const got = JSON.parse(tok.neverProduced(docs, limit));
    return JSON.stringify({ ...got, corpora: names, bytes, documents: docs.length });
  },
  // The Unigram lattice of one pre-token of the tab's tokenizer (the model step): JSON.
  lattice({ text, max_nodes }) {
    return tokenizer.lattice(text, max_nodes);
  },
  // WordPiece's longest-match-first lookups for one pre-token: JSON, the shape of the Python
  // package's Tokenizer.wordpiece_steps (the module gives numbers; the texts are named here).
  wordpiece({ text, max_attempts }) {
    const n = tokenizer.wordpieceSteps(text, max_attempts);
    const prefix = JSON.parse(tokenizer.info()).wordpiece_prefix ?? "";
    const chars = Array.from(text);
    const name = (start, end) => (start > 0 ? prefix : "") + chars.slice(start, end).join("");
    const attempts = [];
    for (let at = 4; at < n.length; at += 3) {
      const id = n[at + 2] === NO_ID ? null : n[at + 2];
      attempts.push({ start: n[at], end: n[at + 1], piece: name(n[at], n[at + 1]), id });
    }
    const [count, flags, unk_id] = n;
    return JSON.stringify({
      chars: count, too_long: !!(flags & 1), unk: !!(flags & 2), truncated: !!(flags & 4),
      attempts, unk_id, unk_token: tokenizer.idToToken(unk_id) ?? "",
    });
  },
  // BPE's merges of one pre-token, with their ranks: JSON, the shape of the Python package's
  // Tokenizer.merge_trace (the parts after each merge are replayed here).
  merges({ text }) {
    const n = tokenizer.mergeTrace(text);
    let at = 1;
    const take = (count) => Array.from(n.subarray(at, (at += count)));
    const initial = take(n[at++]);
    const steps = [];
    let parts = initial.slice();
    for (let k = n[at++]; k > 0; k--) {
      const [index, left, right, rank, merged] = take(5);
      parts = [...parts.slice(0, index), merged, ...parts.slice(index + 2)];
      steps.push({ index, left, right, rank, merged, parts });
    }
    const ids = take(n[at++]);
    const names = [...initial, ...steps.map((s) => s.merged)].map((id) => tokenizer.idToToken(id) ?? "");
    const whole = n[0] === NO_ID ? null : n[0];
    return JSON.stringify({ initial, steps, ids, whole_token: whole, tokens: names });
  },
  // `slot`: trace with that slot's tokenizer (loaded first), else the tab's own.
  trace({ text, cap, slot }) {
    const t0 = performance.now();
    const tok = slot == null ? tokenizer : slots.get(slot)?.tokenizer;
    if (!tok) throw new Error(`no tokenizer in slot ${slot}`);
    const full = JSON.parse(tok.trace(text));
    const ids = Uint32Array.from(full.ids);
    // Compare's rows show no step times: only the tab's own trace is timed over repeats.
    if (slot == null) timeSteps(text, full);
    const trace = trim(full, text, cap);
    trace.total.worker_ms = performance.now() - t0;
    return { trace: JSON.stringify(trace), ids, bytes: trace.total.bytes };
  },
  // The Files tab (tabs/files/count.js), in a second instance of this worker that the page
  // can stop: a file's token count, progress(done, total, tokens, documents) on the way.
  countFile({ file, docs }, progress) {
    const { core, wasm } = modules.get(current);
    return count(file, docs, { tokenizer, glue: core, memory: wasm.memory }, progress);
  },
  chunk({ text, maxTokens }) {
    return chunkText(tokenizer, text, maxTokens);
  },
};

self.onmessage = serveCore(handlers, () => modules.get(current ?? initial)?.wasm);
