// Passing text to a tokenprism wasm module without wasm-bindgen's string copy.
//
// wasm-bindgen hands a JavaScript string to a `&str` parameter by copying it into wasm memory
// in a JavaScript loop, one charCodeAt per char up to the first non-ASCII one (then
// TextEncoder.encodeInto for the rest). In V8 that loop runs at about 100-150 MB/s, slower
// than the normalizer it feeds; encodeInto copies ASCII at GB/s. So the module keeps an input
// buffer (`inputBuffer(capacity)` returns its address) that this writes into with encodeInto,
// and the `...Input(start, len)` methods read the text from there.
//
// One WasmText per module instance (the buffer belongs to the module, not to a tokenizer).

const encoder = new TextEncoder();

export class WasmText {
  // glue: the wasm-bindgen module (has inputBuffer); memory: its WebAssembly.Memory (the
  // exports object its init function returns has it as `memory`).
  constructor(glue, memory) {
    this.glue = glue;
    this.memory = memory;
    this.ptr = 0;
    this.cap = 0;
    this.view = null;
  }

  // Writes `texts` one after the other as UTF-8 into the input buffer; returns each one's
  // [start, len] in bytes. The ranges stay valid until the next write.
  writeAll(texts) {
    // A UTF-16 code unit is at most 3 UTF-8 bytes (a surrogate pair, 2 units, is 4 bytes).
    const need = texts.reduce((n, t) => n + 3 * t.length, 0);
    if (need > this.cap) {
      this.cap = Math.max(need, 2 * this.cap, 1 << 16);
      this.ptr = this.glue.inputBuffer(this.cap);
      this.view = null;
    }
    // A memory that grew has a new ArrayBuffer (the old one is detached): view it again.
    if (this.view === null || this.view.buffer !== this.memory.buffer) {
      this.view = new Uint8Array(this.memory.buffer, this.ptr, this.cap);
    }
    const ranges = [];
    let at = 0;
    for (const t of texts) {
      const { written } = encoder.encodeInto(t, at === 0 ? this.view : this.view.subarray(at));
      ranges.push([at, written]);
      at += written;
    }
    return ranges;
  }

  // Writes one text at the start of the buffer; returns its length in bytes.
  write(text) {
    return this.writeAll([text])[0][1];
  }
}
