// A wasm core in a module Web Worker that survives a crash (shared by every tab's worker).
//
// The Rust core is built with panic=abort: a panic is a wasm trap (`unreachable`), after
// which that instance is unusable. The worker reports a trap as {crashed: true} (see
// `serveCore` below); this side then rejects the request with a CoreCrash error, throws the
// worker away and starts a fresh one, replaying the requests that set its state (the wasm
// module, the tokenizer, its options) so the next request works without a reload. Requests
// that were waiting behind the one that crashed are sent again to the fresh worker: they did
// nothing wrong (new text typed while the core chewed on the bad one must still show).
//
//   const core = new CoreWorker(new URL("tabs/tokenize/worker.js", root), { onCrash });
//   await core.request("init", { pkg }, { keep: "init" });          // replayed after a crash
//   await core.request("load", { text }, { keep: "load", drop: ["configure"] });
//   const result = await core.request("trace", { text });          // not replayed
//
// Worker side: `self.onmessage = serveCore(handlers, () => wasmExports)`.

export class CoreCrash extends Error {
  constructor(message) {
    super(message);
    this.name = "CoreCrash";
    this.crashed = true;
  }
}

export class Cancelled extends Error {
  constructor() {
    super("cancelled");
    this.name = "Cancelled";
    this.cancelled = true;
  }
}

// How many requests `CoreWorker.recent` remembers.
const RECENT = 40;

export class CoreWorker {
  // url: the worker module. onCrash(message): called once per crash, after the fresh worker
  // has been asked to replay (a page shows the message; the next request waits for the replay).
  constructor(url, { onCrash = () => {}, onError = () => {} } = {}) {
    this.url = url;
    this.onCrash = onCrash;
    this.onError = onError;
    this.kept = new Map(); // key -> [type, args]: the state to rebuild, in order
    this.pending = new Map();
    this.nextId = 1;
    this.crashes = 0;
    this.ready = Promise.resolve();
    this.recent = []; // [ms, id, type, what happened], the last RECENT of them: for bug reports
    this.start();
  }

  start() {
    const worker = new Worker(this.url, { type: "module" });
    worker.onmessage = ({ data }) => {
      const entry = this.pending.get(data.id);
      if (!entry) return;
      if (data.progress) {
        entry.onProgress?.(...data.progress);
        return;
      }
      this.pending.delete(data.id);
      this.note(data.id, entry.type, data.ok ? "ok" : data.crashed ? "crashed" : "error");
      if (data.ok) entry.resolve(data.result);
      else if (data.crashed) {
        entry.reject(new CoreCrash(data.error));
        this.restart(data.error);
      } else entry.reject(new Error(data.error));
    };
    worker.onerror = (e) => this.onError(e.message ?? String(e));
    this.worker = worker;
  }

  post(type, args, transfer, onProgress) {
    const id = this.nextId++;
    this.note(id, type, "sent");
    return new Promise((resolve, reject) => {
      // A request whose buffers moved to the worker cannot be sent again.
      const again = !transfer?.length;
      this.pending.set(id, { type, args, again, resolve, reject, onProgress });
      this.worker.postMessage({ id, type, ...args }, transfer ?? []);
    });
  }

  note(id, type, what) {
    if (this.recent.length === RECENT) this.recent.shift();
    this.recent.push([Math.round(performance.now()), id, type, what]);
  }

  // One request. keep: remember it (after it succeeds) under this key, to replay after a
  // crash; a later request with the same key replaces it. drop: keys it makes stale.
  // onProgress(got, total, ...): called when the handler reports progress (see serveCore).
  // Requests run in the worker one after another, in the order they were made, so a caller
  // can send init, load and a first trace at once without waiting for each answer.
  async request(type, args = {}, { keep = null, drop = [], transfer, onProgress } = {}) {
    await this.ready;
    const result = await this.post(type, args, transfer, onProgress);
    if (keep !== null) {
      for (const key of drop) this.kept.delete(key);
      this.kept.delete(keep); // re-inserted last: replay follows the order things happened
      this.kept.set(keep, [type, args]);
    }
    return result;
  }

  restart(message) {
    if (this.worker === null) return;
    this.crashes += 1;
    this.renew(new CoreCrash(message), true);
    this.onCrash(message);
  }

  // Stops the request under way (and those waiting) at once by throwing the worker away; they
  // fail with a Cancelled error, and a fresh worker replays the kept state for the next one.
  cancel() {
    if (this.worker !== null) this.renew(new Cancelled(), false);
  }

  // A fresh worker with the kept state. Requests still waiting fail with `error`, or with
  // `sendAgain` go to the fresh worker after the replay, in the order they were made.
  renew(error, sendAgain) {
    this.worker.terminate();
    this.worker = null;
    this.note(0, "", "restart");
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.start();
    const replay = [...this.kept.values()];
    this.ready = (async () => {
      for (const [type, args] of replay) await this.post(type, args);
    })().catch((err) => this.onError(`restarting the tokenizer core: ${err?.message ?? err}`));
    for (const entry of waiting) {
      if (sendAgain && entry.again) {
        this.ready
          .then(() => this.post(entry.type, entry.args, undefined, entry.onProgress))
          .then(entry.resolve, entry.reject);
      } else entry.reject(error);
    }
  }
}


// The worker side: runs `handlers[type](args, progress, early)` for each message, one at a
// time in arrival order, and replies; progress(got, total, ...) reaches the caller's onProgress. A
// handler may have an `early(args, progress)` that starts at once when its message arrives
// (a download, say), while the requests before it still run; its result is `early`. A wasm
// trap (WebAssembly.RuntimeError) marks this instance dead and is reported as a crash.
// memory() (the size of the wasm memory, for the memory-growth test) comes for free.
export function serveCore(handlers, wasmExports) {
  let dead = null;
  let queue = Promise.resolve();
  const all = {
    memory: () => wasmExports()?.memory.buffer.byteLength ?? 0,
    ...handlers,
  };
  const handle = async (id, type, args, progress, early) => {
    if (dead !== null) {
      self.postMessage({ id, ok: false, crashed: true, error: dead });
      return;
    }
    try {
      const result = await all[type](args, progress, await early);
      self.postMessage({ id, ok: true, result });
    } catch (err) {
      if (err instanceof WebAssembly.RuntimeError) {
        dead = `the tokenizer core crashed (${err.message})`;
        self.postMessage({ id, ok: false, crashed: true, error: dead });
      } else {
        self.postMessage({ id, ok: false, error: String(err?.message ?? err) });
      }
    }
  };
  return (event) => {
    const { id, type, ...args } = event.data;
    const progress = (...values) => self.postMessage({ id, progress: values });
    let early;
    try {
      early = Promise.resolve(all[type]?.early?.(args, progress) ?? null);
    } catch (err) {
      early = Promise.reject(err);
    }
    early.catch(() => {}); // a failure is reported by its own request, in its turn
    queue = queue.then(() => handle(id, type, args, progress, early));
  };
}

// Fetches a file's bytes, reporting progress(got, total) in bytes (total 0 when the server
// sends no Content-Length); workers and pages alike.
export async function fetchBytes(url, progress = () => {}) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const total = Number(response.headers.get("content-length")) || 0;
  if (!response.body) {
    const whole = new Uint8Array(await response.arrayBuffer());
    progress(whole.length, total);
    return whole;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    got += value.length;
    progress(got, total);
  }
  const out = new Uint8Array(got);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
