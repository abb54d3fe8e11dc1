// The JavaScript peers for the browser benchmark, in one module worker that answers the same
// messages as web/tabs/bench/worker.js (configs, hash, time), so web/tabs/bench/driver.js
// times them in the same rounds as tokenprism. Bundled by scripts/bench/bench_web.py with esbuild from the npm
// packages `./build.sh setup` installs (pinned versions); served only by the benchmark
// harness, never part of dist/. Every peer loads local files only (no network).
//
// Peers: @huggingface/transformers (AutoTokenizer from a local tokenizer.json: BERT),
// gpt-tokenizer, js-tiktoken, tiktoken (its WASM build), ai-tokenizer (o200k_base).

// Each peer is imported only when first used (esbuild splits them into their own chunks):
// parsing all of them up front takes long, and their load time is not what is measured.
import { answerMessages, corpusLoader, hashOutputs, timePasses } from "../../../web/tabs/bench/hash.js";

const here = (p) => new URL(p, import.meta.url).href;
const VERSIONS = __PEER_VERSIONS__; // filled in by esbuild --define

// name -> {label, tokenizer, make: async () => (text) => ids}
const PEERS = [
  {
    name: "transformers.js", pkg: "@huggingface/transformers", tokenizer: "bert",
    make: async () => {
      const { AutoTokenizer, env } = await import("@huggingface/transformers");
      env.allowRemoteModels = false;
      env.allowLocalModels = true;
      env.useBrowserCache = false;
      // A path, not a URL: transformers.js looks for local files only under a plain path.
      env.localModelPath = new URL("models/", import.meta.url).pathname;
      const tok = await AutoTokenizer.from_pretrained("bert-base-uncased");
      return (d) => tok.encode(d, { add_special_tokens: false });
    },
  },
  {
    name: "gpt-tokenizer", pkg: "gpt-tokenizer", tokenizer: "o200k",
    make: async () => {
      const { encode: gptTokenizerEncode } = await import("gpt-tokenizer/encoding/o200k_base");
      const none = new Set();
      return (d) => gptTokenizerEncode(d, { disallowedSpecial: none });
    },
  },
  {
    name: "js-tiktoken", pkg: "js-tiktoken", tokenizer: "o200k",
    make: async () => {
      const { Tiktoken: JsTiktoken } = await import("js-tiktoken/lite");
      const { default: jsTiktokenO200k } = await import("js-tiktoken/ranks/o200k_base");
      const enc = new JsTiktoken(jsTiktokenO200k);
      return (d) => enc.encode(d, [], []);
    },
  },
  {
    name: "tiktoken-wasm", pkg: "tiktoken", tokenizer: "o200k",
    make: async () => {
      const { init: tiktokenInit, Tiktoken: WasmTiktoken } = await import("tiktoken/lite/init");
      // The encoder as JSON data (copied next to this bundle), not as bundled code.
      const tiktokenO200k = await (await fetch(here("tiktoken-o200k_base.json"))).json();
      const bytes = await (await fetch(here("tiktoken_bg.wasm"))).arrayBuffer();
      await tiktokenInit((imports) => WebAssembly.instantiate(bytes, imports));
      const enc = new WasmTiktoken(tiktokenO200k.bpe_ranks, tiktokenO200k.special_tokens, tiktokenO200k.pat_str);
      return (d) => enc.encode_ordinary(d);
    },
  },
  {
    name: "ai-tokenizer", pkg: "ai-tokenizer", tokenizer: "o200k",
    make: async () => {
      const { default: AiTokenizer } = await import("ai-tokenizer");
      const aiO200k = await import("ai-tokenizer/encoding/o200k_base");
      const tok = new AiTokenizer(aiO200k);
      return (d) => tok.encode(d, [], []);
    },
  },
];

const made = new Map();
const corpus = corpusLoader(here("../data/bench/"));

async function encoder(name) {
  if (!made.has(name)) {
    const p = PEERS.find((x) => x.name === name);
    if (!p) throw new Error(`no peer ${name}`);
    made.set(name, await p.make());
  }
  return made.get(name);
}

const handlers = {
  configs({ tokenizer }) {
    return PEERS.filter((p) => p.tokenizer === tokenizer).map((p) => ({
      name: p.name, label: `${p.name} ${VERSIONS[p.pkg] ?? ""}`.trim(),
    }));
  },
  async hash({ config, corpus: name, op }) {
    if (op !== "encode") throw new Error(`${config}: encode only`);
    const f = await encoder(config);
    const { docs, bytes } = await corpus(name);
    const outputs = docs.map((d) => Array.from(f(d)));
    const tokens = outputs.reduce((n, o) => n + o.length, 0);
    return { sha256: await hashOutputs(outputs), tokens, bytes, documents: docs.length };
  },
  async time({ config, corpus: name, minMs }) {
    const f = await encoder(config);
    const { docs, bytes } = await corpus(name);
    const { ms, passes, sink } = timePasses(docs, f, minMs);
    return { ms, passes, bytes, sink };
  },
};

answerMessages(handlers);
