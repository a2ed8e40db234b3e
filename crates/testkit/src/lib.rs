//! Test support shared by the native test suites (a dev-dependency only).
//!
//! The third-party corpus lives beside the clone, in `../shared/corpus`, and is never copied into
//! the repository. On a developer's machine without it, the tests that need it print a note and
//! pass; in CI that would let every reference test (torch, HTA, memory_viz) "pass" without running.
//! So when `CI` or `TRACELIGHT_REQUIRE_CORPUS` is set (to anything but `0` or empty), a missing
//! corpus file fails the test, naming the file — `.ci/run` sets `TRACELIGHT_REQUIRE_CORPUS=1`.
//! Loops over corpus files count what they checked and assert the count ([`checked`]), so a renamed
//! or removed file cannot shrink a reference test to nothing.

use std::path::{Path, PathBuf};

/// `../shared/corpus` beside the clone, or `TRACELIGHT_CORPUS` where set (the pytest and e2e
/// suites read the same variable).
pub fn root() -> PathBuf {
    match std::env::var_os("TRACELIGHT_CORPUS") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    }
}

/// Whether a missing corpus file fails the run (CI) instead of skipping the test (a laptop).
pub fn required() -> bool {
    ["TRACELIGHT_REQUIRE_CORPUS", "CI"]
        .iter()
        .any(|k| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false"))
}

/// The corpus path `rel` (relative to `../shared/corpus`, e.g. `real/hta/…`), when it exists.
/// When it does not: panics naming it if the corpus is [`required`], else prints a note and
/// returns `None` so the caller can skip.
#[track_caller]
pub fn path(rel: &str) -> Option<PathBuf> {
    existing(&root().join(rel))
}

/// `p` (a corpus path built by the caller) when it exists, under the same rule as [`path`].
#[track_caller]
pub fn existing(p: &Path) -> Option<PathBuf> {
    if p.exists() {
        return Some(p.to_path_buf());
    }
    if required() {
        panic!(
            "corpus file {} is missing (TRACELIGHT_REQUIRE_CORPUS/CI is set, so a missing corpus \
             fails instead of skipping)",
            p.display()
        );
    }
    println!("note: corpus file {} absent; skipping", p.display());
    None
}

/// The bytes of corpus file `rel`, under the same rule as [`path`] (gzip is not undone).
#[track_caller]
pub fn bytes(rel: &str) -> Option<Vec<u8>> {
    read(root().join(rel))
}

/// The bytes of `p` (a corpus path built by the caller), under the same rule as [`path`].
#[track_caller]
pub fn read(p: impl AsRef<Path>) -> Option<Vec<u8>> {
    let p = existing(p.as_ref())?;
    match std::fs::read(&p) {
        Ok(b) => Some(b),
        Err(e) => panic!("corpus file {} exists but cannot be read: {e}", p.display()),
    }
}

/// Asserts that a loop over corpus files checked exactly `expected` of them (`what` names the
/// loop). Off CI, a run without the corpus may have checked none; with the corpus present (or
/// required) a different count means a file was renamed, removed or silently passed over.
#[track_caller]
pub fn checked(what: &str, n: usize, expected: usize) {
    if n == 0 && !required() && !root().exists() {
        return;
    }
    assert_eq!(
        n, expected,
        "{what}: checked {n} corpus files, expected {expected} (one renamed, removed or skipped?)"
    );
}

/// A small xorshift64 generator for randomized tests: reproducible from `seed` (non-zero), with no
/// crate for it, so a failing case can be replayed by its seed.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// `rounds` damaged copies of a list of sections (what a worker hands the page), in turn one
/// section's bit flipped, one cut short, one dropped, two swapped, at places drawn from `seed`:
/// a decoder must give each an error or a value, never a panic.
pub fn damaged(good: &[Vec<u8>], rounds: usize, seed: u64) -> Vec<Vec<Vec<u8>>> {
    let mut rng = xorshift(seed);
    let mut next = |n: usize| (rng() % n.max(1) as u64) as usize;
    (0..rounds)
        .map(|round| {
            let mut s = good.to_vec();
            let k = next(s.len());
            match round % 4 {
                0 => {
                    let len = s[k].len();
                    if len > 0 {
                        let i = next(len);
                        s[k][i] ^= 1 << next(8);
                    }
                }
                1 => {
                    let len = s[k].len();
                    s[k].truncate(next(len));
                }
                2 => {
                    s.remove(k);
                }
                _ => {
                    let j = next(s.len());
                    s.swap(k, j);
                }
            }
            s
        })
        .collect()
}
