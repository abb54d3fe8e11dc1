//! SentencePiece's `.model` files: a serialized `ModelProto` (protocol buffers, proto2), read
//! with a small wire reader of our own, and turned into a pipeline that gives SentencePiece's
//! ids: its normalizer, no pre-tokenizer, a Unigram or BPE model scoring as it does, its
//! decoder.
//!
//! Fields read (numbers from sentencepiece_model.proto): `pieces` (1: piece 1, score 2, type
//! 3), `trainer_spec` (2: model_type 3, treat_whitespace_as_suffix 24, byte_fallback 35,
//! unk_surface 44), `normalizer_spec` (3: precompiled_charsmap 2, add_dummy_prefix 3,
//! remove_extra_whitespaces 4, escape_whitespaces 5), `denormalizer_spec` (5). Other fields
//! only matter to training (or to ids SentencePiece's encode does not add) and are skipped.
//! What would change the ids and is not implemented is refused, naming the field.

use crate::error::{Error, Result};
use crate::models::sentencepiece::{piece_byte, PieceKind};
use crate::normalizers::precompiled::Precompiled;
use crate::normalizers::sentencepiece::SpmNormalizer;
use crate::tokenizer::{Decoder, Normalizer, Tokenizer};
use std::collections::HashSet;
use std::sync::Arc;

/// One field of a message: its number and value.
enum Value<'a> {
    Varint(u64),
    /// (No field read here is one: skipped.)
    Fixed64,
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// The protocol buffers wire format, field by field.
struct Wire<'a> {
    buf: &'a [u8],
    at: usize,
    /// The message's path, for errors.
    path: &'a str,
}

impl<'a> Wire<'a> {
    fn new(buf: &'a [u8], path: &'a str) -> Self {
        Wire { buf, at: 0, path }
    }

    fn bad(&self, why: &str) -> Error {
        Error::Invalid(format!("not a SentencePiece model: {} at byte {}: {why}", self.path, self.at))
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.buf.get(self.at).ok_or_else(|| self.bad("truncated varint"))?;
            self.at += 1;
            v |= ((b & 0x7F) as u64) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.bad("varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| self.bad("truncated field"))?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// The next field, or None at the end of the message.
    fn next(&mut self) -> Result<Option<(u64, Value<'a>)>> {
        if self.at == self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let (field, wire) = (key >> 3, key & 7);
        if field == 0 {
            return Err(self.bad("field number 0"));
        }
        let v = match wire {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed64
            }
            2 => {
                let n = usize::try_from(self.varint()?).map_err(|_| self.bad("length too large"))?;
                Value::Bytes(self.take(n)?)
            }
            5 => Value::Fixed32(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes"))),
            // Groups (3, 4) are no part of this schema; 6 and 7 do not exist.
            w => return Err(self.bad(&format!("wire type {w}"))),
        };
        Ok(Some((field, v)))
    }
}

fn expect_varint(v: Value, what: &str) -> Result<u64> {
    match v {
        Value::Varint(x) => Ok(x),
        _ => Err(Error::Invalid(format!("not a SentencePiece model: {what} is not a varint"))),
    }
}

fn expect_bytes<'a>(v: Value<'a>, what: &str) -> Result<&'a [u8]> {
    match v {
        Value::Bytes(b) => Ok(b),
        _ => Err(Error::Invalid(format!("not a SentencePiece model: {what} is not length-delimited"))),
    }
}

fn expect_str<'a>(v: Value<'a>, what: &str) -> Result<&'a str> {
    std::str::from_utf8(expect_bytes(v, what)?)
        .map_err(|_| Error::Invalid(format!("not a SentencePiece model: {what} is not UTF-8")))
}

/// One entry of `ModelProto.pieces`.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub piece: String,
    pub score: f32,
    pub kind: PieceKind,
}

/// The model types of `TrainerSpec.model_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelType {
    Unigram,
    Bpe,
    Word,
    Char,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrainerSpec {
    pub model_type: ModelType,
    pub byte_fallback: bool,
    pub treat_whitespace_as_suffix: bool,
    /// None: the default, " ⁇ ".
    pub unk_surface: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NormalizerSpec {
    pub name: String,
    pub precompiled_charsmap: Vec<u8>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
}

/// The parts of a `ModelProto` that encoding and decoding read.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelProto {
    pub pieces: Vec<Piece>,
    pub trainer_spec: TrainerSpec,
    pub normalizer_spec: NormalizerSpec,
    /// Applied to decoded text when present with a char map.
    pub denormalizer_spec: Option<NormalizerSpec>,
}

fn parse_piece(b: &[u8], i: usize) -> Result<Piece> {
    let path = format!("pieces[{i}]");
    let mut w = Wire::new(b, &path);
    let mut p = Piece { piece: String::new(), score: 0.0, kind: PieceKind::Normal };
    while let Some((f, v)) = w.next()? {
        match f {
            1 => p.piece = expect_str(v, &format!("{path}.piece"))?.to_owned(),
            2 => match v {
                Value::Fixed32(x) => p.score = f32::from_bits(x),
                _ => {
                    return Err(Error::Invalid(format!(
                        "not a SentencePiece model: {path}.score is not a float"
                    )))
                }
            },
            3 => {
                let n = expect_varint(v, &format!("{path}.type"))?;
                p.kind = PieceKind::from_proto(n).ok_or_else(|| {
                    Error::Unsupported(format!("{path}.type = {n}: not a SentencePiece piece type"))
                })?;
            }
            _ => {}
        }
    }
    Ok(p)
}

fn parse_trainer_spec(b: &[u8], spec: &mut TrainerSpec) -> Result<()> {
    let mut w = Wire::new(b, "trainer_spec");
    while let Some((f, v)) = w.next()? {
        match f {
            3 => {
                spec.model_type = match expect_varint(v, "trainer_spec.model_type")? {
                    1 => ModelType::Unigram,
                    2 => ModelType::Bpe,
                    3 => ModelType::Word,
                    4 => ModelType::Char,
                    n => {
                        return Err(Error::Unsupported(format!(
                            "trainer_spec.model_type = {n}: not a model type"
                        )))
                    }
                }
            }
            24 => {
                spec.treat_whitespace_as_suffix =
                    expect_varint(v, "trainer_spec.treat_whitespace_as_suffix")? != 0
            }
            35 => spec.byte_fallback = expect_varint(v, "trainer_spec.byte_fallback")? != 0,
            44 => spec.unk_surface = Some(expect_str(v, "trainer_spec.unk_surface")?.to_owned()),
            _ => {}
        }
    }
    Ok(())
}

fn parse_normalizer_spec(b: &[u8], spec: &mut NormalizerSpec, path: &str) -> Result<()> {
    let mut w = Wire::new(b, path);
    while let Some((f, v)) = w.next()? {
        match f {
            1 => spec.name = expect_str(v, &format!("{path}.name"))?.to_owned(),
            2 => {
                spec.precompiled_charsmap = expect_bytes(v, &format!("{path}.precompiled_charsmap"))?.to_vec()
            }
            3 => spec.add_dummy_prefix = expect_varint(v, &format!("{path}.add_dummy_prefix"))? != 0,
            4 => {
                spec.remove_extra_whitespaces =
                    expect_varint(v, &format!("{path}.remove_extra_whitespaces"))? != 0
            }
            5 => spec.escape_whitespaces = expect_varint(v, &format!("{path}.escape_whitespaces"))? != 0,
            _ => {}
        }
    }
    Ok(())
}

fn default_normalizer_spec() -> NormalizerSpec {
    NormalizerSpec {
        name: String::new(),
        precompiled_charsmap: Vec::new(),
        add_dummy_prefix: true,
        remove_extra_whitespaces: true,
        escape_whitespaces: true,
    }
}

/// Reads a serialized `ModelProto` (the fields listed in the module docs).
pub fn parse_model_proto(data: &[u8]) -> Result<ModelProto> {
    let mut m = ModelProto {
        pieces: Vec::new(),
        trainer_spec: TrainerSpec {
            model_type: ModelType::Unigram,
            byte_fallback: false,
            treat_whitespace_as_suffix: false,
            unk_surface: None,
        },
        normalizer_spec: default_normalizer_spec(),
        denormalizer_spec: None,
    };
    let mut w = Wire::new(data, "ModelProto");
    // A message field that occurs twice is merged into one, as protocol buffers do.
    while let Some((f, v)) = w.next()? {
        match f {
            1 => {
                let i = m.pieces.len();
                m.pieces.push(parse_piece(expect_bytes(v, "pieces")?, i)?);
            }
            2 => parse_trainer_spec(expect_bytes(v, "trainer_spec")?, &mut m.trainer_spec)?,
            3 => parse_normalizer_spec(
                expect_bytes(v, "normalizer_spec")?,
                &mut m.normalizer_spec,
                "normalizer_spec",
            )?,
            5 => {
                let spec = m.denormalizer_spec.get_or_insert_with(default_normalizer_spec);
                parse_normalizer_spec(expect_bytes(v, "denormalizer_spec")?, spec, "denormalizer_spec")?
            }
            _ => {}
        }
    }
    Ok(m)
}

/// Whether `data` reads as a SentencePiece model: a `ModelProto` whose first field is a piece,
/// parsed whole. (A tokenizer.json starts with `{`, a vocab.txt with a token; a `.model` file
/// with its pieces.)
pub fn looks_like_model(data: &[u8]) -> bool {
    data.first() == Some(&0x0A) && parse_model_proto(data).is_ok_and(|m| !m.pieces.is_empty())
}

/// SentencePiece refuses pieces this long.
const MAX_PIECE_BYTES: usize = 8000;

/// The tokenizer of a `.model` file's bytes.
pub fn tokenizer_from_model(data: &[u8]) -> Result<Tokenizer> {
    tokenizer_from_proto(&parse_model_proto(data)?)
}

/// The tokenizer of a parsed `ModelProto`, checked as SentencePiece checks one when it loads.
pub fn tokenizer_from_proto(m: &ModelProto) -> Result<Tokenizer> {
    let ts = &m.trainer_spec;
    if let Some(d) = &m.denormalizer_spec {
        if !d.precompiled_charsmap.is_empty() {
            return Err(Error::Unsupported(
                "denormalizer_spec.precompiled_charsmap: rules applied to decoded text are not implemented"
                    .into(),
            ));
        }
    }
    if m.pieces.is_empty() {
        return Err(Error::Invalid("the SentencePiece model has no pieces".into()));
    }
    let mut seen = HashSet::new();
    let mut unk = None;
    let mut bytes = [false; 256];
    for (i, p) in m.pieces.iter().enumerate() {
        if p.piece.is_empty() {
            return Err(Error::Invalid(format!("pieces[{i}].piece is empty")));
        }
        if p.piece.len() >= MAX_PIECE_BYTES {
            return Err(Error::Invalid(format!("pieces[{i}].piece is {} bytes long", p.piece.len())));
        }
        if p.piece.contains('\0') && !(p.piece == "\0" && p.kind == PieceKind::Unused) {
            return Err(Error::Invalid(format!("pieces[{i}].piece holds a NUL char")));
        }
        if !seen.insert(p.piece.as_str()) {
            return Err(Error::Invalid(format!("pieces[{i}].piece {:?} is already defined", p.piece)));
        }
        match p.kind {
            PieceKind::Unknown if unk.is_some() => {
                return Err(Error::Invalid(format!("pieces[{i}] is a second unknown piece")))
            }
            PieceKind::Unknown => unk = Some(i as u32),
            PieceKind::Byte if !ts.byte_fallback => {
                return Err(Error::Invalid(format!(
                    "pieces[{i}] is the byte piece {:?} but trainer_spec.byte_fallback is false",
                    p.piece
                )))
            }
            PieceKind::Byte => match piece_byte(&p.piece) {
                Some(b) => bytes[b as usize] = true,
                None => return Err(Error::Invalid(format!("pieces[{i}]: invalid byte piece {:?}", p.piece))),
            },
            _ => {}
        }
    }
    let unk = unk.ok_or_else(|| Error::Invalid("the SentencePiece model has no unknown piece".into()))?;
    if ts.byte_fallback && bytes.contains(&false) {
        return Err(Error::Invalid(
            "trainer_spec.byte_fallback is true but the model lacks some of the 256 byte pieces".into(),
        ));
    }
    let ns = &m.normalizer_spec;
    let charsmap = if ns.precompiled_charsmap.is_empty() {
        None
    } else {
        let p = Precompiled::from_charsmap(ns.precompiled_charsmap.clone())
            .map_err(|e| Error::Invalid(format!("normalizer_spec.precompiled_charsmap: {e}")))?;
        Some(Arc::new(p))
    };
    let user_defined: Vec<String> =
        m.pieces.iter().filter(|p| p.kind == PieceKind::UserDefined).map(|p| p.piece.clone()).collect();
    let normalizer = SpmNormalizer::new(
        charsmap,
        user_defined,
        ns.add_dummy_prefix,
        ns.remove_extra_whitespaces,
        ns.escape_whitespaces,
        ts.treat_whitespace_as_suffix,
    );
    let pieces: Vec<(String, f32, PieceKind)> =
        m.pieces.iter().map(|p| (p.piece.clone(), p.score, p.kind)).collect();
    let model = match ts.model_type {
        ModelType::Unigram => {
            let u = crate::models::unigram::Unigram::sentencepiece(pieces, unk, ts.byte_fallback)?;
            crate::models::Model::Unigram(crate::models::UnigramModel::new(u)?)
        }
        ModelType::Bpe => {
            let b = crate::models::bpe::sentencepiece::SentencePieceBpe::new(pieces, unk, ts.byte_fallback)?;
            crate::models::Model::SentencePieceBpe(crate::models::SentencePieceBpeModel::new(b)?)
        }
        t => {
            // Named here, not by Debug: the wasm builds derive Debug as the type's name alone.
            let name = if t == ModelType::Word { "WORD" } else { "CHAR" };
            return Err(Error::Unsupported(format!(
                "trainer_spec.model_type = {name}: only Unigram and BPE models are implemented"
            )));
        }
    };
    let decoder = crate::decoders::sentencepiece::SpmDecoder::new(
        m.pieces.iter().map(|p| (p.piece.as_str(), p.kind)),
        ts.unk_surface.clone().unwrap_or_else(|| " \u{2047} ".into()),
        ns.add_dummy_prefix,
        ns.remove_extra_whitespaces,
    );
    Tokenizer::new(
        Some(Normalizer::SentencePiece(Arc::new(normalizer))),
        None,
        model,
        None,
        Some(Decoder::SentencePiece(Arc::new(decoder))),
        Vec::new(),
        None,
        None,
    )
}

#[cfg(test)]
mod tests;
