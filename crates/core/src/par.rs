//! Two computations at once on a native machine with more than one core, one after the other
//! elsewhere (wasm, where threads cannot start, and one-core machines): the analyses of a trace are
//! independent passes over it, and on many cores the CLI spent four fifths of its time running
//! them one by one after a sharded read.

use std::sync::OnceLock;

/// Whether [`join`] may start threads: more than one core reported (never in wasm, where
/// `available_parallelism` is an error).
fn threaded() -> bool {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())) > 1
}

/// `(a(), b())`, `b` on a scoped thread of its own where [`threaded`], else after `a` on this one
/// (also when the thread cannot start). A panic in `b` is resumed here, as if it ran inline.
pub fn join<A, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B)
where
    A: Send,
    B: Send,
{
    if !threaded() {
        return (a(), b());
    }
    // `b` waits here until a thread takes it; if none can start, this thread does.
    let cell = std::sync::Mutex::new(Some(b));
    let take = || cell.lock().unwrap_or_else(|p| p.into_inner()).take();
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new().spawn_scoped(s, || take().map(|f| f()));
        let ra = a();
        let rb = match spawned {
            Ok(h) => match h.join() {
                Ok(Some(v)) => Some(v),
                Ok(None) => None,
                Err(p) => std::panic::resume_unwind(p),
            },
            Err(_) => None,
        };
        // Invariant: `b` ran on the thread, or is still in the cell (the thread did not start).
        let rb = rb.or_else(|| take().map(|f| f()));
        match rb {
            Some(v) => (ra, v),
            None => unreachable!("b ran on its thread or here"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_run_and_keep_their_order() {
        let v: Vec<u64> = (0..10_000).collect();
        let (a, (b, c)) = join(
            || v.iter().sum::<u64>(),
            || join(|| v.len(), || v.iter().filter(|x| *x % 2 == 0).count()),
        );
        assert_eq!((a, b, c), (49_995_000, 10_000, 5_000));
    }
}
