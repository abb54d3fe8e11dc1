use super::*;

/// Writes `m` in the wire format (the fields [`parse_model_proto`] reads).
pub(super) fn write_model_proto(m: &ModelProto) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    fn key(out: &mut Vec<u8>, field: u64, wire: u64) {
        varint(out, field << 3 | wire);
    }
    fn bytes(out: &mut Vec<u8>, field: u64, b: &[u8]) {
        key(out, field, 2);
        varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }
    fn flag(out: &mut Vec<u8>, field: u64, v: bool) {
        key(out, field, 0);
        varint(out, v as u64);
    }
    fn normalizer(n: &NormalizerSpec) -> Vec<u8> {
        let mut o = Vec::new();
        bytes(&mut o, 1, n.name.as_bytes());
        if !n.precompiled_charsmap.is_empty() {
            bytes(&mut o, 2, &n.precompiled_charsmap);
        }
        flag(&mut o, 3, n.add_dummy_prefix);
        flag(&mut o, 4, n.remove_extra_whitespaces);
        flag(&mut o, 5, n.escape_whitespaces);
        o
    }
    let mut out = Vec::new();
    for p in &m.pieces {
        let mut o = Vec::new();
        bytes(&mut o, 1, p.piece.as_bytes());
        key(&mut o, 2, 5);
        o.extend_from_slice(&p.score.to_bits().to_le_bytes());
        let kind = match p.kind {
            PieceKind::Normal => 1,
            PieceKind::Unknown => 2,
            PieceKind::Control => 3,
            PieceKind::UserDefined => 4,
            PieceKind::Unused => 5,
            PieceKind::Byte => 6,
        };
        key(&mut o, 3, 0);
        varint(&mut o, kind);
        bytes(&mut out, 1, &o);
    }
    let ts = &m.trainer_spec;
    let mut t = Vec::new();
    key(&mut t, 3, 0);
    varint(
        &mut t,
        match ts.model_type {
            ModelType::Unigram => 1,
            ModelType::Bpe => 2,
            ModelType::Word => 3,
            ModelType::Char => 4,
        },
    );
    flag(&mut t, 24, ts.treat_whitespace_as_suffix);
    flag(&mut t, 35, ts.byte_fallback);
    if let Some(s) = &ts.unk_surface {
        bytes(&mut t, 44, s.as_bytes());
    }
    bytes(&mut out, 2, &t);
    bytes(&mut out, 3, &normalizer(&m.normalizer_spec));
    if let Some(d) = &m.denormalizer_spec {
        bytes(&mut out, 5, &normalizer(d));
    }
    out
}

fn piece(p: &str, score: f32, kind: PieceKind) -> Piece {
    Piece { piece: p.into(), score, kind }
}

fn proto(model_type: ModelType, pieces: Vec<Piece>) -> ModelProto {
    ModelProto {
        pieces,
        trainer_spec: TrainerSpec {
            model_type,
            byte_fallback: false,
            treat_whitespace_as_suffix: false,
            unk_surface: None,
        },
        normalizer_spec: default_normalizer_spec(),
        denormalizer_spec: None,
    }
}

fn small(model_type: ModelType) -> ModelProto {
    use PieceKind::*;
    proto(
        model_type,
        vec![
            piece("<unk>", 0.0, Unknown),
            piece("<s>", 0.0, Control),
            piece("▁", -1.0, Normal),
            piece("a", -2.0, Normal),
            piece("b", -2.0, Normal),
            piece("▁a", -1.5, Normal),
            piece("ab", -1.0, Normal),
            piece("<x>", 0.0, UserDefined),
        ],
    )
}

fn ids(t: &Tokenizer, s: &str) -> Vec<u32> {
    t.encode(s, None, true).unwrap().ids().collect()
}

#[test]
fn the_wire_format_round_trips() {
    let m = small(ModelType::Bpe);
    let bytes = write_model_proto(&m);
    assert!(looks_like_model(&bytes));
    assert_eq!(parse_model_proto(&bytes).unwrap(), m);
    // Truncated anywhere: an error, never a panic.
    for n in 0..bytes.len() {
        let _ = parse_model_proto(&bytes[..n]);
    }
    assert!(!looks_like_model(b"{\"model\": {}}"));
    assert!(!looks_like_model(b"[PAD]\n[UNK]\n"));
}

#[test]
fn unigram_and_bpe_models_encode_and_decode() {
    for ty in [ModelType::Unigram, ModelType::Bpe] {
        let t = tokenizer_from_proto(&small(ty)).unwrap();
        // "<s>" is text, not the control piece; "<x>" is the user-defined piece.
        let e = t.encode(" ab  <x>a<s>", None, true).unwrap();
        let got: Vec<&str> = e.tokens().iter().map(|s| &**s).collect();
        match ty {
            ModelType::Unigram => assert_eq!(got, ["▁", "ab", "▁", "<x>", "a", "<s>"], "{ty:?}"),
            _ => assert_eq!(got, ["▁", "ab", "▁", "<x>", "a", "<s>"], "{ty:?}"),
        }
        assert_eq!(e.ids().last(), Some(0));
        assert_eq!(t.decode(&ids(&t, "ab a"), true).unwrap(), "ab a");
        assert_eq!(t.decode(&[1, 5, 0], true).unwrap(), "a \u{2047} ");
        assert!(t.decode(&[99], true).is_err());
    }
}

#[test]
fn what_sentencepiece_refuses_is_refused() {
    use PieceKind::*;
    let err = |m: &ModelProto| tokenizer_from_proto(m).unwrap_err().to_string();
    let mut m = small(ModelType::Unigram);
    m.pieces[0].kind = Normal;
    assert!(err(&m).contains("no unknown piece"), "{}", err(&m));
    let mut m = small(ModelType::Unigram);
    m.pieces.push(piece("a", 0.0, Normal));
    assert!(err(&m).contains("already defined"));
    let mut m = small(ModelType::Unigram);
    m.pieces.push(piece("<0x41>", 0.0, Byte));
    assert!(err(&m).contains("byte_fallback"));
    m.trainer_spec.byte_fallback = true;
    assert!(err(&m).contains("256 byte pieces"));
    let m = small(ModelType::Word);
    assert!(err(&m).contains("trainer_spec.model_type"));
    let mut m = small(ModelType::Bpe);
    m.denormalizer_spec =
        Some(NormalizerSpec { precompiled_charsmap: vec![4, 0, 0, 0, 0], ..default_normalizer_spec() });
    assert!(err(&m).contains("denormalizer_spec.precompiled_charsmap"));
    // A denormalizer without rules is nothing to apply.
    m.denormalizer_spec = Some(default_normalizer_spec());
    assert!(tokenizer_from_proto(&m).is_ok());
}

#[test]
fn byte_fallback_spells_unknown_chars() {
    use PieceKind::*;
    for ty in [ModelType::Unigram, ModelType::Bpe] {
        let mut m = small(ty);
        m.trainer_spec.byte_fallback = true;
        for b in 0..=255u8 {
            m.pieces.push(piece(&format!("<0x{b:02X}>"), 0.0, Byte));
        }
        let t = tokenizer_from_proto(&m).unwrap();
        let e = t.encode("aé", None, true).unwrap();
        let toks: Vec<&str> = e.tokens().iter().map(|s| &**s).collect();
        assert_eq!(toks, ["▁a", "<0xC3>", "<0xA9>"], "{ty:?}");
        assert_eq!(t.decode(&e.ids().collect::<Vec<_>>(), true).unwrap(), "aé");
    }
}

#[test]
fn user_defined_pieces_score_by_their_length() {
    use PieceKind::*;
    let m = proto(
        ModelType::Unigram,
        vec![
            piece("<unk>", 0.0, Unknown),
            piece("▁", -1.0, Normal),
            piece("a", -1.0, Normal),
            piece("b", -1.0, Normal),
            piece("c", -1.0, Normal),
            piece("bc", 0.05, Normal),
            piece("ab", 0.0, UserDefined),
        ],
    );
    let t = tokenizer_from_proto(&m).unwrap();
    // "ab" scores 0.1 * (2 - 1): ▁ ab c (-1.9) beats ▁ a bc (-1.95).
    let e = t.encode("abc", None, true).unwrap();
    assert_eq!(e.tokens().iter().map(|s| &**s).collect::<Vec<_>>(), ["▁", "ab", "c"]);
}
