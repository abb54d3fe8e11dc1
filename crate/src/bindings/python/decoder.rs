//! `Decoder`: a decoder loaded from its tokenizer.json JSON.

use pyo3::prelude::*;

use super::to_py_err;
use crate::decoders::Decoder;

/// A decoder, from the JSON of one (e.g. `json.dumps(tokenizer_json["decoder"])`).
///
/// >>> Decoder.from_str('{"type": "ByteFallback"}').decode(["a", "<0xC3>", "<0xA9>"])
/// 'aé'
#[pyclass(module = "tokenprism", name = "Decoder", frozen)]
pub struct PyDecoder {
    inner: Decoder,
}

#[pymethods]
impl PyDecoder {
    #[staticmethod]
    fn from_str(json: &str) -> PyResult<Self> {
        let inner = crate::loaders::tokenizer_json::parse_decoder_json(json).map_err(to_py_err)?;
        Ok(PyDecoder { inner })
    }

    /// The text of `tokens`.
    fn decode(&self, tokens: Vec<String>) -> PyResult<String> {
        self.inner.decode(tokens).map_err(to_py_err)
    }
}
