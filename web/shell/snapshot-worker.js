// Downloads Pyodide's memory snapshot and inflates it, off the page's main thread (boot.js):
// inflating 31 MB there would hold up the drawing of the core's first answer. Message in:
// {url}; out: {got, total} as bytes arrive, then {bytes} (the snapshot, transferred; null when
// the server has none or it did not arrive whole).

// The snapshot's bytes from its download stream, inflated as they arrive unless the host
// already did (a gzip stream starts 1f 8b; Pyodide's snapshot with its magic number).
async function snapshotBytes(stream) {
  const reader = stream.getReader();
  const first = await reader.read();
  const gzip = !first.done && first.value[0] === 0x1f && first.value[1] === 0x8b;
  const whole = new ReadableStream({
    start(controller) {
      if (!first.done) controller.enqueue(first.value);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
  });
  const body = gzip ? whole.pipeThrough(new DecompressionStream("gzip")) : whole;
  return new Uint8Array(await new Response(body).arrayBuffer());
}

self.onmessage = async ({ data: { url } }) => {
  let bytes = null;
  try {
    // Low: the tokenizer core's few small files go first (the budget for first tokens).
    const response = await fetch(url, { priority: "low" });
    if (response.ok) {
      const total = Number(response.headers.get("content-length")) || 0;
      let got = 0;
      bytes = await snapshotBytes(response.body.pipeThrough(new TransformStream({
        transform(chunk, controller) {
          got += chunk.length;
          self.postMessage({ got, total });
          controller.enqueue(chunk);
        },
      })));
    }
  } catch (err) {
    console.warn("tokenprism: no Pyodide snapshot:", err);
  }
  self.postMessage({ bytes }, bytes ? [bytes.buffer] : []);
};
