// Stands in for onnxruntime-web / onnxruntime-common when scripts/bench/bench_web.py bundles
// @huggingface/transformers for the benchmark: only its tokenizers run, never a model, so
// the ONNX runtime (tens of MB of wasm) is neither needed nor loaded.
export const env = { wasm: {}, webgpu: {}, webnn: {}, logLevel: "warning", versions: {} };
export class Tensor {
  constructor() {
    throw new Error("bench peers: no ONNX runtime (tokenizers only)");
  }
}
export class InferenceSession {
  static async create() {
    throw new Error("bench peers: no ONNX runtime (tokenizers only)");
  }
}
export default { env, Tensor, InferenceSession };
