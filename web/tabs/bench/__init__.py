"""The Bench tab: the wasm builds' speed on corpus slices."""
