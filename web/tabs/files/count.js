// The Files tab's work, run in a tokenizer worker (tabs/tokenize/worker.js imports it): token
// counts of a whole file read a slice at a time, and a text cut into chunks. Both use the
// worker's tokenizer as it is loaded and configured.
//
// A slice's bytes go straight into the wasm module's input buffer, after what the previous
// slice left (a document, or a UTF-8 sequence, that its end cut); the core counts the
// documents that end in it and checks that the bytes are UTF-8 (Tokenizer::count_documents).

// Bytes read at a time: a slice takes the BERT core ~0.1 s, so progress moves several times
// a second and the worker's memory stays small.
const SLICE = 4 << 20;
// Progress messages at most this often (ms).
const PROGRESS_EVERY = 150;
// The largest file the page counts, and the largest one document (mode "file") may be: a
// document is encoded in one call, held whole in wasm memory with its ids.
export const FILE_LIMIT = 200_000_000;
export const DOCUMENT_LIMIT = 32_000_000;

function inputView(glue, memory, size) {
  const ptr = glue.inputBuffer(size);
  return new Uint8Array(memory.buffer, ptr, size);
}

// Counts `file` (a File or Blob) with `tokenizer` of module `glue` (its exports: `memory`),
// documents cut as `docs` says ("file", "line", "blank-line"). progress(done, total, tokens,
// documents) a few times a second; returns {bytes, documents, tokens, docs, ms}.
export async function countFile(file, docs, { tokenizer, glue, memory }, progress) {
  const total = file.size;
  if (total === 0) throw new Error("the file is empty");
  if (total > FILE_LIMIT) {
    throw new Error(`the file is ${(total / 1e6).toFixed(0)} MB; the limit is ${FILE_LIMIT / 1e6} MB`);
  }
  if (docs === "file" && total > DOCUMENT_LIMIT) {
    throw new Error(
      `one document of ${(total / 1e6).toFixed(0)} MB is over the ${DOCUMENT_LIMIT / 1e6} MB a ` +
        'single document may be: count it by "line" or "blank-line"',
    );
  }
  const t0 = performance.now();
  let carry = new Uint8Array(0);
  let base = 0; // the file offset of carry[0]
  let at = 0; // bytes read
  let documents = 0;
  let tokens = 0;
  let shown = 0;
  while (at < total) {
    const size = docs === "file" ? total : Math.min(SLICE, total - at);
    const slice = new Uint8Array(await file.slice(at, at + size).arrayBuffer());
    if (at === 0 && slice.subarray(0, 65536).includes(0)) {
      throw new Error("the file holds NUL bytes: it looks binary, not text");
    }
    at += slice.length;
    const last = at >= total;
    const n = carry.length + slice.length;
    let view = inputView(glue, memory, n);
    view.set(carry, 0);
    view.set(slice, carry.length);
    const [d, t, used, invalid] = tokenizer.countDocumentsInput(0, n, docs, last);
    if (invalid >= 0) {
      throw new Error(`the file is not UTF-8 text (byte ${(base + invalid).toLocaleString("en")} is not valid UTF-8)`);
    }
    documents += d;
    tokens += t;
    // The count may have grown the memory: view it again to keep what was not used.
    view = new Uint8Array(memory.buffer, glue.inputBuffer(n), n);
    carry = view.slice(used, n);
    base += used;
    const now = performance.now();
    if (now - shown >= PROGRESS_EVERY || last) {
      shown = now;
      progress(base, total, tokens, documents);
    }
  }
  return { bytes: total, documents, tokens, docs, ms: performance.now() - t0 };
}

// `text` in chunks of at most `maxTokens` tokens: [[start, end, tokens, cut], ...] in UTF-16
// units, cut 0 paragraph, 1 sentence, 2 token, 3 end (Tokenizer::chunk).
export function chunkText(tokenizer, text, maxTokens) {
  const flat = tokenizer.chunk(text, maxTokens);
  const out = [];
  for (let i = 0; i < flat.length; i += 4) out.push([flat[i], flat[i + 1], flat[i + 2], flat[i + 3]]);
  return out;
}
