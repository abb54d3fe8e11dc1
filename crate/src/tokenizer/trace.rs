//! [`Trace`]: one run of the pipeline laid open for the page: every stage's text and where its
//! chars came from, the pre-tokens, the tokens, and the time each step took.

use serde::Serialize;

use super::{AlignedText, Tokenizer};
use crate::clock::now_micros;

/// One stage of the trace: its output text, where its chars came from, and how long it took.
#[derive(Clone, Debug, Serialize)]
pub struct StageTrace {
    pub name: &'static str,
    pub text: String,
    pub micros: f64,
    /// The alignment of `text` to the input, run-length encoded: `(first, len, step)` stands
    /// for `len` chars of `text` coming from input chars `first, first + step, ...`
    /// (`step` is 0 or 1). Compact for the common cases: unchanged text is one run, an
    /// expansion (NFD, CJK spacing) a run with step 0.
    pub runs: Vec<(u32, u32, u32)>,
}

/// Appends `orig` (one input char index per output char) to run-length encoded `runs`.
pub fn push_runs(runs: &mut Vec<(u32, u32, u32)>, orig: &[u32]) {
    for &o in orig {
        if let Some((first, len, step)) = runs.last_mut() {
            let last = *first + (*len - 1) * *step;
            // `checked_add`: an inserted first char has orig AT_START (u32::MAX).
            if *len == 1 && (o == last || Some(o) == last.checked_add(1)) {
                *step = o - last;
                *len += 1;
                continue;
            }
            if *len > 1 && Some(o) == last.checked_add(*step) {
                *len += 1;
                continue;
            }
        }
        runs.push((o, 1, 1));
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct PreTokenTrace {
    pub text: String,
    /// Char offsets into the input.
    pub offsets: (u32, u32),
}

/// One stage of the pre-tokenizer (each component of a Sequence is one): the pieces after
/// it, and how long it took.
#[derive(Clone, Debug, Serialize)]
pub struct PreTokenizerStageTrace {
    pub name: &'static str,
    pub pieces: Vec<PreTokenTrace>,
    pub micros: f64,
}

/// What a traced run gathers after the normalizer: the pieces after each pre-tokenizer stage,
/// and the pre-tokens the model gets.
#[derive(Debug, Default)]
pub(crate) struct PieceLog {
    pub stages: Vec<PreTokenizerStageTrace>,
    pub pre_tokens: Vec<PreTokenTrace>,
}

impl PieceLog {
    /// A piece no pre-tokenizer sees (an added token): as it is in every stage.
    pub fn push_whole(&mut self, piece: PreTokenTrace) {
        for s in &mut self.stages {
            s.pieces.push(piece.clone());
        }
        self.pre_tokens.push(piece);
    }
}

/// Everything the page shows about one run of the pipeline on one input.
#[derive(Clone, Debug, Serialize)]
pub struct Trace {
    /// "raw", then one per normalizer stage (BertNormalizer: clean, cjk, nfd, strip_accents,
    /// lowercase; a disabled step repeats its input).
    pub stages: Vec<StageTrace>,
    /// For each char of the final normalized text, the index of the input char it came from.
    pub alignment: Vec<u32>,
    /// One per pre-tokenizer component, in order (none without a pre-tokenizer); the last
    /// one's pieces are `pre_tokens`.
    pub pre_tokenizer_stages: Vec<PreTokenizerStageTrace>,
    pub pre_tokens: Vec<PreTokenTrace>,
    pub pre_tokenize_micros: f64,
    pub model_micros: f64,
    pub tokens: Vec<String>,
    pub ids: Vec<u32>,
    pub offsets: Vec<(u32, u32)>,
    pub special_tokens_mask: Vec<u32>,
    /// The whole run, from input to ids.
    pub micros: f64,
    /// The model's type, as the file names it ("WordPiece", "BPE", "WordLevel", "Unigram").
    pub model: &'static str,
    /// What the fast paths did on this input (BERT normalizers only).
    pub fast: Option<FastTrace>,
}

/// The fast paths at work on one input: the normalizer's statistics (blocks skipped,
/// pages hit, zero copy or not) and its time with each fast path switched off in turn.
#[derive(Clone, Debug, Serialize)]
pub struct FastTrace {
    /// The switches in force.
    pub paths: crate::fused::FastPaths,
    /// The vector implementation used: avx2, sse2, simd128, swar or scalar.
    pub kernel: &'static str,
    pub stats: crate::fused::Stats,
    /// (variant, microseconds per run of the normalizer alone), warm: "fast paths on",
    /// "simd off", "page cache off", "lazy output off", "all off (staged)".
    pub normalize_micros: Vec<(&'static str, f64)>,
}

impl Tokenizer {
    /// Runs the pipeline on one input, recording every stage (no truncation or padding:
    /// the page shows the whole input).
    pub fn trace(&self, text: &str) -> crate::Result<Trace> {
        let mut trace = self.trace_stages(text)?;
        trace.fast = self.fast_trace(text);
        Ok(trace)
    }

    /// The step times of `runs` traced runs of `text`, run after run: each stage's
    /// [`StageTrace::micros`], then the pre-tokenizer's, the model's and the whole run's. A
    /// short input's steps take less than a browser's clock can see (5 µs or coarser), so the
    /// page sums many runs.
    pub fn step_micros(&self, text: &str, runs: usize) -> crate::Result<Vec<f64>> {
        let mut out = Vec::new();
        for _ in 0..runs {
            let t = self.trace_stages(text)?;
            out.extend(t.stages.iter().map(|s| s.micros));
            out.extend([t.pre_tokenize_micros, t.model_micros, t.micros]);
        }
        Ok(out)
    }

    /// [`Tokenizer::trace`] without the fast paths' statistics.
    fn trace_stages(&self, text: &str) -> crate::Result<Trace> {
        let start = now_micros();
        let mut stages: Vec<StageTrace> = std::iter::once("raw")
            .chain(self.stage_names())
            .map(|name| StageTrace { name, text: String::new(), micros: 0.0, runs: Vec::new() })
            .collect();
        stages[0].text = text.to_owned();
        let n_chars = text.chars().count() as u32;
        if n_chars > 0 {
            stages[0].runs.push((0, n_chars, 1));
        }
        let mut alignment = Vec::new();
        if stages.len() == 1 {
            alignment.extend(0..text.chars().count() as u32);
        }
        let mut observer = |k: usize, _name: &'static str, t: &AlignedText, micros: f64| {
            let i = 1 + k;
            stages[i].text.push_str(&t.text);
            stages[i].micros += micros;
            push_runs(&mut stages[i].runs, &t.orig);
            if i == stages.len() - 1 {
                alignment.extend_from_slice(&t.orig);
            }
        };
        let mut pieces = PieceLog {
            stages: self
                .pre_tokenizer_stage_names()
                .into_iter()
                .map(|name| PreTokenizerStageTrace { name, pieces: Vec::new(), micros: 0.0 })
                .collect(),
            pre_tokens: Vec::new(),
        };
        let mut timings = (0.0, 0.0);
        let a = self.encode_single(text, 0, 0, Some(&mut observer), Some(&mut pieces), &mut timings)?;
        let enc = crate::processors::post_process(
            self.post_processor.as_ref(),
            self.model.vocab_r(),
            a,
            None,
            true,
        )?;
        let special_tokens_mask = enc.special_tokens_mask().collect();
        Ok(Trace {
            stages,
            alignment,
            pre_tokenizer_stages: pieces.stages,
            pre_tokens: pieces.pre_tokens,
            pre_tokenize_micros: timings.0,
            model_micros: timings.1,
            tokens: enc.tokens().into_iter().map(str::to_owned).collect(),
            ids: enc.ids().collect(),
            offsets: enc.offsets().collect(),
            special_tokens_mask,
            micros: now_micros() - start,
            model: self.model.type_name(),
            fast: None,
        })
    }

    /// Runs the BERT normalizer alone on `text` with detailed statistics, then times it
    /// with each fast path off in turn (warm, repeated until the clock can see it).
    fn fast_trace(&self, text: &str) -> Option<FastTrace> {
        use crate::fused::{bert_normalizer::normalize, FastPaths, Stats};
        let cache = self.cache.as_ref()?;
        let mut stats = Stats::detailed();
        let _ = normalize(cache, self.fast, text, Some(&mut stats));
        let variants: [(&'static str, Option<FastPaths>); 5] = [
            (
                "fast paths on",
                Some(FastPaths { simd: true, page_cache: true, lazy_output: true, fused: false }),
            ),
            ("simd off", Some(FastPaths { simd: false, ..FastPaths::default() })),
            ("page cache off", Some(FastPaths { page_cache: false, ..FastPaths::default() })),
            ("lazy output off", Some(FastPaths { lazy_output: false, ..FastPaths::default() })),
            ("all off (staged)", None),
        ];
        let cfg = *cache.config();
        let run = |v: &Option<FastPaths>| match v {
            Some(fp) => normalize(cache, *fp, text, None).len(),
            None => crate::normalizers::bert::normalize(&cfg, text).text.len(),
        };
        let mut normalize_micros = Vec::new();
        for (name, v) in &variants {
            run(v); // warm: pages built, code paged in
            let t0 = now_micros();
            run(v);
            let first = (now_micros() - t0).max(0.0);
            // Browsers round the clock to 0.1 ms or coarser: repeat short runs until the
            // total is long enough to measure (at most 50 runs, at most ~5 ms).
            let reps = if first >= 2000.0 { 1 } else { (2000.0 / first.max(1.0)).ceil().min(50.0) as usize };
            let t0 = now_micros();
            for _ in 0..reps {
                std::hint::black_box(run(v));
            }
            normalize_micros.push((*name, (now_micros() - t0) / reps as f64));
        }
        Some(FastTrace {
            paths: self.fast,
            kernel: if self.fast.simd { crate::simd::Kernel::best().name() } else { "scalar" },
            stats,
            normalize_micros,
        })
    }
}

#[cfg(all(test, feature = "general"))]
mod tests {
    use super::*;

    fn tokenizer(normalizer: &str, pre_tokenizer: &str) -> Tokenizer {
        Tokenizer::from_json_str(&format!(
            r#"{{"normalizer": {normalizer}, "pre_tokenizer": {pre_tokenizer},
                "added_tokens": [{{"id": 1, "content": "<x>", "special": true}}],
                "model": {{"type": "WordLevel", "vocab": {{"[UNK]": 0}}, "unk_token": "[UNK]"}}}}"#
        ))
        .unwrap()
    }

    fn pieces(stage: &PreTokenizerStageTrace) -> Vec<(&str, (u32, u32))> {
        stage.pieces.iter().map(|p| (p.text.as_str(), p.offsets)).collect()
    }

    #[test]
    fn one_pre_tokenizer_stage_per_component() {
        let t = tokenizer(
            r#"{"type": "Lowercase"}"#,
            r#"{"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true}]},
                {"type": "Metaspace", "replacement": "_", "prepend_scheme": "first", "split": true}]}"#,
        );
        let tr = t.trace("Ab12 <x>c d").unwrap();
        let names: Vec<_> = tr.pre_tokenizer_stages.iter().map(|s| s.name).collect();
        assert_eq!(names, ["whitespace_split", "digits", "metaspace"]);
        // The added token splits the input in two segments; it is a piece of every stage.
        let [split, digits, meta] = &tr.pre_tokenizer_stages[..] else { panic!("three stages") };
        assert_eq!(pieces(split), [("ab12", (0, 4)), ("<x>", (5, 8)), ("c", (8, 9)), ("d", (10, 11))]);
        assert_eq!(
            pieces(digits),
            [("ab", (0, 2)), ("1", (2, 3)), ("2", (3, 4)), ("<x>", (5, 8)), ("c", (8, 9)), ("d", (10, 11))]
        );
        // "first": only the first piece of the first segment gets the prefix.
        assert_eq!(pieces(meta)[0], ("_ab", (0, 2)));
        assert_eq!(pieces(meta)[4], ("c", (8, 9)));
        let last: Vec<_> = tr.pre_tokens.iter().map(|p| (p.text.as_str(), p.offsets)).collect();
        assert_eq!(pieces(meta), last);
        assert!(tr.pre_tokenizer_stages.iter().all(|s| s.micros >= 0.0));
    }

    #[test]
    fn no_pre_tokenizer_no_stage() {
        let tr = tokenizer("null", "null").trace("a b").unwrap();
        assert!(tr.pre_tokenizer_stages.is_empty());
        assert_eq!(tr.pre_tokens.len(), 1);
    }

    #[test]
    fn step_micros_has_a_row_per_run_with_one_value_per_step() {
        let t = tokenizer(
            r#"{"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "NFD"}]}"#,
            "null",
        );
        let width = t.trace("Ab c").unwrap().stages.len() + 3;
        assert_eq!(width, 6);
        let v = t.step_micros("Ab c", 4).unwrap();
        assert_eq!(v.len(), 4 * width);
        assert!(v.iter().all(|m| *m >= 0.0));
        // The whole run holds its steps.
        for row in v.chunks(width) {
            assert!(row[width - 1] >= row[..width - 1].iter().sum::<f64>() - 1.0);
        }
    }

    /// The reference rewrites the text after "^"'s insertion with items computed for the
    /// whole text, and indexes past its end (a panic): encode and trace fail alike.
    #[test]
    fn a_normalizer_the_reference_fails_on_fails_the_pipeline() {
        let t = tokenizer(
            r#"{"type": "Sequence", "normalizers": [
                {"type": "Replace", "pattern": {"Regex": "^"}, "content": "XY"}, {"type": "NFD"}]}"#,
            "null",
        );
        assert!(t.encode("a", None, true).is_err());
        assert!(t.trace("a").is_err());
        assert!(t.encode_batch(&[("a", None)], true).is_err());
        // The empty text has nothing to rewrite.
        assert!(t.encode("", None, true).is_ok());
    }
}
