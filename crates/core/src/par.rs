//! Two computations at once on a native machine with more than one core, one after the other
//! elsewhere (wasm, where threads cannot start, and one-core machines): the analyses of a trace are
//! independent passes over it, and on many cores the CLI spent four fifths of its time running
//! them one by one after a sharded read.

use std::sync::OnceLock;

/// How many threads [`all`] runs its jobs on: the cores reported, 1 in wasm (where
/// `available_parallelism` is an error).
pub fn threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Whether [`join`] may start threads: more than one core reported.
fn threaded() -> bool {
    threads() > 1
}

/// A job for [`all`]: it writes its result where it captured a place for it.
pub type Job<'a> = Box<dyn FnOnce() + Send + 'a>;

/// Runs every job, on up to [`threads`] threads, taking them in the order given (so the biggest
/// should come first); one after the other on this thread where there is one core (wasm), which
/// keeps a single-threaded caller's allocations in the order it wrote them. A panic in a job is
/// raised here after the others end, as `std::thread::scope` does.
pub fn all(jobs: Vec<Job<'_>>) {
    run(threads(), jobs);
}

/// [`all`] for jobs over `items` values in all: one thread per [`PER_THREAD`] of them at most,
/// so a small trace's finish does not start threads that would cost more than they save.
pub fn all_over(items: usize, jobs: Vec<Job<'_>>) {
    run(threads().min(items / PER_THREAD + 1), jobs);
}

/// Values a thread of [`all_over`] should have to itself at least.
pub const PER_THREAD: usize = 1 << 15;

fn run(threads: usize, jobs: Vec<Job<'_>>) {
    let n = threads.min(jobs.len());
    if n <= 1 {
        jobs.into_iter().for_each(|j| j());
        return;
    }
    let queue = std::sync::Mutex::new(jobs.into_iter());
    let next = || queue.lock().unwrap_or_else(|p| p.into_inner()).next();
    let drain = || {
        while let Some(j) = next() {
            j();
        }
    };
    std::thread::scope(|s| {
        for _ in 1..n {
            // A thread that cannot start leaves its share to the others and to this one.
            let _ = std::thread::Builder::new().spawn_scoped(s, drain);
        }
        drain();
    });
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

    #[test]
    fn all_runs_every_job_once_and_each_writes_its_own_place() {
        let mut out = vec![0u64; 37];
        let jobs: Vec<Job<'_>> = out
            .iter_mut()
            .enumerate()
            .map(|(k, o)| Box::new(move || *o += (k as u64 + 1) * 3) as Job<'_>)
            .collect();
        all(jobs);
        let want: Vec<u64> = (1..=37).map(|k| k * 3).collect();
        assert_eq!(out, want);
        all(Vec::new());
    }
}
