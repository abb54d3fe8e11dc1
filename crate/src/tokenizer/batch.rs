//! Batches on threads: the inputs cut into contiguous slices that a pool of threads takes in
//! turn, results in input order; and [`FlatIds`], a batch's ids end to end.

use crate::error::Result;

/// How many slices a batch is cut into per thread.
const SLICES_PER_THREAD: usize = 8;

/// Runs `f` on contiguous slices of `inputs` on up to `threads` threads, and returns
/// its results in slice order (one slice, on the calling thread, when `threads` is 1 and on
/// wasm32, which has no threads to spawn). The first error wins; a panic in a worker is
/// resumed on the caller, as it would have surfaced on one thread.
///
/// The threads are a pool per thread count that lives as long as the process: the word
/// caches are per thread, and threads spawned per call started cold every time (o200k on
/// 5 MB of English: two fresh threads took 1.7x the CPU time of one warm one).
pub(crate) fn on_slices<T: Sync, R: Send>(
    inputs: &[T],
    threads: usize,
    f: impl Fn(&[T]) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let threads = if cfg!(target_arch = "wasm32") { 1 } else { threads.clamp(1, inputs.len().max(1)) };
    if threads == 1 {
        return Ok(vec![f(inputs)?]);
    }
    // Several slices per thread, taken in turn by whichever thread is free: with one slice
    // each, the thread given the longer documents (or the busier core) set the pace.
    let chunk = inputs.len().div_ceil(threads * SLICES_PER_THREAD);
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(pool) = pool(threads) {
        use rayon::prelude::*;
        let results: Vec<Result<R>> = pool.install(|| inputs.par_chunks(chunk).map(&f).collect());
        return results.into_iter().collect();
    }
    // No pool (the system refused the threads): the slices in turn, on this thread.
    inputs.chunks(chunk).map(&f).collect()
}

/// The pool of `threads` threads, made on first use and kept.
///
/// A forked child (Python's multiprocessing, a data loader's workers) inherits the pools but
/// not their threads, and a pool without threads would wait forever: a child makes its own.
#[cfg(not(target_arch = "wasm32"))]
fn pool(threads: usize) -> Option<std::sync::Arc<rayon::ThreadPool>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    type Pools = (u32, HashMap<usize, Arc<rayon::ThreadPool>>);
    static POOLS: Mutex<Option<Pools>> = Mutex::new(None);
    let mut guard = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    let (owner, pools) = guard.get_or_insert_with(|| (pid, HashMap::new()));
    if *owner != pid {
        // The parent's pools: dropping one would signal threads this process does not have.
        std::mem::forget(std::mem::take(pools));
        *owner = pid;
    }
    if let Some(p) = pools.get(&threads) {
        return Some(p.clone());
    }
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("tokenprism-{i}"))
        .build()
        .ok()?;
    Some(pools.entry(threads).or_insert(Arc::new(built)).clone())
}

/// The ids of a batch laid end to end, as training data stores them: input `i`'s ids are
/// `ids[offsets[i]..offsets[i + 1]]`, and `offsets` has one entry more than the batch
/// (`offsets[0] == 0`, the last is `ids.len()`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatIds {
    pub ids: Vec<u32>,
    pub offsets: Vec<usize>,
}

impl FlatIds {
    /// How many inputs the batch had.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ids of input `i`.
    pub fn get(&self, i: usize) -> &[u32] {
        &self.ids[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Each input's ids in turn.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        self.offsets.windows(2).map(|w| &self.ids[w[0]..w[1]])
    }

    /// The ids of `inputs`, `encode(input, ids)` appending each input's ids, on up to `threads`
    /// threads. Each slice fills a buffer of its own; with one thread that buffer is the
    /// result, with more they are joined in order (one copy of the ids, a few percent of
    /// the time it took to make them).
    pub(crate) fn encode<T: Sync>(
        inputs: &[T],
        threads: usize,
        encode: impl Fn(&T, &mut Vec<u32>) -> Result<()> + Sync,
    ) -> Result<FlatIds> {
        let mut parts = on_slices(inputs, threads, |part| {
            let mut ids = Vec::new();
            let mut ends = Vec::with_capacity(part.len());
            for x in part {
                encode(x, &mut ids)?;
                ends.push(ids.len());
            }
            Ok((ids, ends))
        })?;
        let mut offsets = Vec::with_capacity(inputs.len() + 1);
        offsets.push(0);
        if parts.len() == 1 {
            let (ids, ends) = parts.pop().expect("one part");
            offsets.extend(ends);
            return Ok(FlatIds { ids, offsets });
        }
        let mut ids = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
        for (part, ends) in parts {
            let base = ids.len();
            ids.extend_from_slice(&part);
            offsets.extend(ends.into_iter().map(|e| base + e));
        }
        Ok(FlatIds { ids, offsets })
    }
}

impl FromIterator<Vec<u32>> for FlatIds {
    fn from_iter<I: IntoIterator<Item = Vec<u32>>>(lists: I) -> Self {
        let mut flat = FlatIds { ids: Vec::new(), offsets: vec![0] };
        for ids in lists {
            flat.ids.extend_from_slice(&ids);
            flat.offsets.push(flat.ids.len());
        }
        flat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// Input `n` becomes the ids `n, n, ... ` (n of them): lengths 0, 1, 2, ... make every
    /// offset distinct and an empty input part of the batch.
    fn repeat(n: &u32, ids: &mut Vec<u32>) -> Result<()> {
        ids.extend(std::iter::repeat_n(*n, *n as usize));
        Ok(())
    }

    #[test]
    fn flat_ids_are_the_inputs_in_order_whatever_the_threads() {
        let inputs: Vec<u32> = (0..37).collect();
        for threads in [1, 2, 3, 8, 64] {
            let flat = FlatIds::encode(&inputs, threads, repeat).unwrap();
            assert_eq!(flat.len(), inputs.len());
            assert_eq!(flat.offsets[0], 0);
            assert_eq!(*flat.offsets.last().unwrap(), flat.ids.len());
            for (i, ids) in flat.iter().enumerate() {
                assert_eq!(ids, vec![i as u32; i].as_slice(), "threads {threads}, input {i}");
                assert_eq!(flat.get(i), ids);
            }
            assert_eq!(flat, inputs.iter().map(|&n| vec![n; n as usize]).collect::<FlatIds>());
        }
    }

    #[test]
    fn an_empty_batch_has_one_offset() {
        let flat = FlatIds::encode(&[] as &[u32], 4, repeat).unwrap();
        assert!(flat.is_empty() && flat.ids.is_empty());
        assert_eq!(flat.offsets, [0]);
        assert_eq!(std::iter::empty::<Vec<u32>>().collect::<FlatIds>(), flat);
    }

    #[test]
    fn the_first_error_wins() {
        let inputs: Vec<u32> = (0..10).collect();
        let err = FlatIds::encode(&inputs, 3, |&n, ids| {
            if n >= 5 {
                return Err(Error::Input(format!("input {n}")));
            }
            repeat(&n, ids)
        })
        .unwrap_err();
        assert_eq!(err, Error::Input("input 5".into()));
    }

    #[test]
    #[should_panic(expected = "input 7")]
    fn a_worker_panic_reaches_the_caller() {
        let inputs: Vec<u32> = (0..10).collect();
        let _ = on_slices(&inputs, 4, |part| {
            assert!(!part.contains(&7), "input 7");
            Ok(())
        });
    }
}
