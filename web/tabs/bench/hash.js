// What the benchmark's two workers share (worker.js beside this file and the JS peers'
// worker, scripts/bench/bench_web/peers-worker.js): the message loop, the corpus slices, the
// timed loop and the ids hash. The hash: sha256 over per-document records, each a u32
// little-endian length followed by the ids as u32 little-endian (or, for the normalizer, the
// UTF-8 byte count and the bytes). The same bytes scripts/bench/bench_worker.py hashes, so wasm, native and reference hashes compare directly.

// Answers each message {id, type, ...args} with {id, ok, result | error} from
// handlers[type](args).
export function answerMessages(handlers) {
  self.onmessage = async (event) => {
    const { id, type, ...args } = event.data;
    try {
      const result = await handlers[type](args);
      self.postMessage({ id, ok: true, result });
    } catch (err) {
      self.postMessage({ id, ok: false, error: String(err?.message ?? err) });
    }
  };
}

// corpus(name) -> {docs, bytes}: the slice <name>.json in `dir` (a list of documents), fetched
// once, with its UTF-8 size.
export function corpusLoader(dir) {
  const corpora = new Map();
  return async (name) => {
    if (!corpora.has(name)) {
      // Only names from the slice index: the name becomes part of a URL.
      if (!/^[a-z0-9_-]+$/.test(name)) throw new Error(`bad corpus name ${name}`);
      const r = await fetch(new URL(`${name}.json`, dir));
      if (!r.ok) throw new Error(`corpus ${name}: HTTP ${r.status}`);
      const docs = await r.json();
      const enc = new TextEncoder();
      corpora.set(name, { docs, bytes: docs.reduce((n, d) => n + enc.encode(d).length, 0) });
    }
    return corpora.get(name);
  };
}

// Whole passes of f over docs until minMs have elapsed: {ms, passes, sink}, sink summing the
// results (a number as itself, ids by their count) so that no pass can be optimised away.
export function timePasses(docs, f, minMs) {
  let passes = 0;
  let sink = 0;
  const t0 = performance.now();
  let ms;
  for (;;) {
    for (const d of docs) {
      const r = f(d);
      sink += typeof r === "number" ? r : r.length;
    }
    passes++;
    ms = performance.now() - t0;
    if (ms >= minMs) break;
  }
  return { ms, passes, sink };
}

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function hashOutputs(outputs) {
  let size = 0;
  for (const o of outputs) size += 4 + (typeof o === "string" ? 0 : o.length * 4);
  const enc = new TextEncoder();
  const texts = outputs.map((o) => (typeof o === "string" ? enc.encode(o) : null));
  for (const t of texts) if (t) size += t.length;
  const buf = new Uint8Array(size);
  const view = new DataView(buf.buffer);
  let at = 0;
  outputs.forEach((o, i) => {
    if (texts[i]) {
      view.setUint32(at, texts[i].length, true);
      buf.set(texts[i], at + 4);
      at += 4 + texts[i].length;
    } else {
      view.setUint32(at, o.length, true);
      at += 4;
      for (const id of o) {
        view.setUint32(at, id, true);
        at += 4;
      }
    }
  });
  return hex(await crypto.subtle.digest("SHA-256", buf));
}

