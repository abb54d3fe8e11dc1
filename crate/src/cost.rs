//! A count of the work the encoder does, in test builds only: bytes the pre-tokenizer's
//! matchers look at and parts the merge loops visit. Tests bound it by a multiple of the input
//! length, which a quadratic regression exceeds and a loaded machine cannot (wall-clock
//! bounds could do neither reliably). Outside `cfg(test)`, [`add`] compiles to nothing.

#[cfg(test)]
thread_local!(static UNITS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) });

/// Counts `n` units of work on this thread (test builds).
#[inline(always)]
pub(crate) fn add(n: usize) {
    #[cfg(test)]
    UNITS.with(|u| u.set(u.get() + n as u64));
    #[cfg(not(test))]
    let _ = n;
}

/// Runs `f` and returns its result with the units of work it did on this thread.
#[cfg(test)]
pub(crate) fn of<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = UNITS.with(|u| u.get());
    let r = f();
    (r, UNITS.with(|u| u.get()) - before)
}
