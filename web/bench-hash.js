// The ids hash of the benchmark, shared by bench-worker.js and the JS peers' worker: sha256
// over per-document records, each a u32 little-endian length followed by the ids as u32
// little-endian (or, for the normalizer, the UTF-8 byte count and the bytes). The same bytes
// scripts/bench_worker.py hashes, so wasm, native and reference hashes compare directly.

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

