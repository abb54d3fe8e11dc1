// The Bench tab's driver (main thread): runs the benchmark protocol over workers that answer
// worker.js's messages (configs, hash, time): tokenprism's own worker and, when a
// benchmark harness passes one (scripts/bench_web.py), a worker running JavaScript peers.
// The normal page never loads peers. Exposed as window.tokenprismBench for the tab's app.py and the
// harness:
//   run(options) -> results (plain object; see runBench)
//   corpora()    -> {corpus: {bytes, documents}} (data/bench/index.json)
//   native()     -> the native benchmark's JSON (data/bench/native.json) or null
//
// Protocol (scripts/bench.py's): per cell (corpus x tokenizer x op), every run makes one
// hashed warm-up pass; then `rounds` rounds, each timing every run once, the order rotating
// by one each round; a timed run repeats whole passes over the documents until minMs have
// elapsed. MB/s = UTF-8 bytes / time / 1e6; reported: the median over rounds, and the median
// of the per-round ratios to the first run (wasm simd128), so a slow spell hits both sides.

class WorkerClient {
  constructor(url) {
    this.worker = new Worker(url, { type: "module" });
    this.pending = new Map();
    this.next = 1;
    this.worker.onmessage = ({ data }) => {
      const entry = this.pending.get(data.id);
      this.pending.delete(data.id);
      if (data.ok) entry.resolve(data.result);
      else entry.reject(new Error(data.error));
    };
    // A worker that fails to load or throws outside a request fails every request, now and later.
    this.failure = null;
    this.worker.onerror = (e) => {
      this.failure = new Error(`worker ${url}: ${e.message || "failed to load"}`);
      for (const entry of this.pending.values()) entry.reject(this.failure);
      this.pending.clear();
    };
  }

  request(type, args = {}) {
    const id = this.next++;
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, type, ...args });
    });
  }

  terminate() {
    this.worker.terminate();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? null : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

let ours = null;
// The site's root (this file sits in tabs/bench/): data/ and a harness's peers are there.
const root = new URL("../../", import.meta.url);

function oursWorker() {
  ours ??= new WorkerClient(new URL("worker.js", import.meta.url));
  return ours;
}

async function fetchJson(path) {
  const r = await fetch(new URL(path, root));
  return r.ok ? r.json() : null;
}

// options: {corpora: [...], tokenizers: ["bert", "o200k"], ops: ["normalize", "encode"],
//           rounds, minMs, onProgress(text),
//           peersUrl: a peers worker module relative to the site root (harness only),
//           nativeBridge: the name of a window function running the native module (harness only)}
export async function runBench(options) {
  const {
    corpora = ["en"], tokenizers = ["bert"], ops = ["normalize", "encode"],
    rounds = 5, minMs = 200, peersUrl = null, nativeBridge = null, onProgress = () => {},
  } = options;
  const started = performance.now();
  const workers = [{ kind: "ours", client: oursWorker() }];
  // A harness may add the native module as one more "worker": a function the page can call
  // (Playwright's expose_function) taking (type, argsJson) and answering JSON, timed in the
  // same rounds as the wasm runs, so a slow spell of the machine hits both sides of a ratio.
  if (nativeBridge && typeof window[nativeBridge] === "function") {
    const call = window[nativeBridge];
    workers.push({ kind: "native", client: { request: async (type, args) => JSON.parse(await call(type, JSON.stringify(args))) } });
  }
  let peers = null;
  if (peersUrl) {
    peers = new WorkerClient(new URL(peersUrl, root));
    workers.push({ kind: "peer", client: peers });
  }
  const cells = [];
  const problems = [];
  try {
    for (const tokenizer of tokenizers) {
      const runs = [];
      for (const w of workers) {
        try {
          const list = await w.client.request("configs", { tokenizer });
          for (const c of list) runs.push({ ...c, kind: w.kind, client: w.client });
        } catch (err) {
          problems.push({ corpus: "*", tokenizer, op: "*", run: w.kind, error: String(err?.message ?? err) });
        }
      }
      for (const corpus of corpora) {
        for (const op of ops) {
          if (op === "normalize" && tokenizer !== "bert") continue;
          const cellRuns = runs.filter((r) => r.kind !== "peer" || op === "encode");
          const out = [];
          for (const r of cellRuns) {
            onProgress(`${corpus} · ${tokenizer} · ${op}: warm-up ${r.label}`);
            const args = { tokenizer, config: r.name, corpus, op };
            try {
              const h = await r.client.request("hash", args);
              out.push({ name: r.name, label: r.label, kind: r.kind, ...h, ms: [], mbps_rounds: [] });
            } catch (err) {
              problems.push({ corpus, tokenizer, op, run: r.name, error: String(err?.message ?? err) });
            }
          }
          const live = out.map((o) => ({ o, r: cellRuns.find((r) => r.name === o.name && r.kind === o.kind) }));
          for (let k = 0; k < rounds; k++) {
            onProgress(`${corpus} · ${tokenizer} · ${op}: round ${k + 1} of ${rounds}`);
            const order = live.map((_, i) => live[(i + k) % live.length]);
            for (const { o, r } of order) {
              const t = await r.client.request("time", { tokenizer, config: r.name, corpus, op, minMs });
              o.ms.push(t.ms / t.passes);
              o.mbps_rounds.push(t.bytes / (t.ms / t.passes) / 1e3);
            }
          }
          const base = out[0];
          for (const o of out) {
            o.mbps = median(o.mbps_rounds);
            o.vs_base = base ? median(o.mbps_rounds.map((v, k) => v / base.mbps_rounds[k])) : null;
            o.ids_match_base = base ? o.sha256 === base.sha256 : null;
          }
          cells.push({ corpus, tokenizer, op, runs: out });
        }
      }
    }
  } finally {
    peers?.terminate();
  }
  return {
    date: new Date().toISOString(),
    user_agent: navigator.userAgent,
    cores: navigator.hardwareConcurrency,
    protocol: { rounds, min_ms: minMs },
    seconds: (performance.now() - started) / 1000,
    cells,
    problems,
  };
}

window.tokenprismBench = {
  run: async (options) => JSON.stringify(await runBench(options)),
  corpora: async () => (await fetchJson("data/bench/index.json"))?.corpora ?? {},
  // Only asked for when the build copied one in (no 404 in the console otherwise).
  native: async () => ((await fetchJson("data/bench/index.json"))?.native ? fetchJson("data/bench/native.json") : null),
};
