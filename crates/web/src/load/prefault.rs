//! The page's memory for a big trace's model, touched while the workers parse.
//!
//! The page decodes the model's sections into columns it reserves whole (a 1 GB trace: ~270 MB).
//! Memory the instance grows into is slow to touch the first time (page faults behind
//! `memory.grow`, ~0.6 ms per MiB here), and those faults fell inside the hand-off, after the
//! parse, where nothing else runs beside it. Touched a few ms at a time while the workers still
//! parse and then freed, the memory stays with the allocator and the columns reuse it.

/// Bytes touched at a time: ~0.6 ms here, but page faults on this virtual machine at times ran
/// ~20x slower (8 MiB steps then made tasks of 54-111 ms), so a step stops after [`STEP_MS`].
const STEP: usize = 1 << 20;

/// The page's thread given to one step at most (it runs at each worker's progress, ~20 a second).
const STEP_MS: f64 = 4.0;

/// The share of the file the page touches ahead: below its model (0.25-0.28x the file on the
/// synthetic and real traces measured, see BENCHMARKS), so the page's memory does not end higher
/// than the model alone takes it.
const SHARE: f64 = 0.2;

/// Parsed bytes, as a share of the file, before the first step: the preview's first screen and
/// the workers' start come first (from a quarter, a 1 GB trace's first paint came 0-170 ms
/// later in 4 pairs of loads on two cores: its first steps met it).
const FROM: f64 = 0.4;

/// A block of memory written a step at a time and freed when dropped: the page's [`Prefault`],
/// and the merging worker's while it waits for a shard (`tl_touch`).
#[derive(Default)]
pub(crate) struct Touched(Vec<u8>);

impl Touched {
    /// Writes up to `by` more bytes of a block of `want`; false once the block is whole, or when
    /// it cannot be had (then nothing is kept).
    pub(crate) fn grow(&mut self, want: usize, by: usize) -> bool {
        let t = &mut self.0;
        if t.capacity() == 0 && (want == 0 || t.try_reserve_exact(want).is_err()) {
            return false;
        }
        let to = (t.len() + by).min(t.capacity());
        t.resize(to, 1);
        to < t.capacity()
    }
}

#[derive(Default)]
pub(super) struct Prefault {
    touched: Touched,
    want: usize,
    done: bool,
}

impl Prefault {
    /// For a file of `total` bytes read in workers.
    pub(super) fn for_file(total: u64) -> Self {
        Self {
            touched: Touched::default(),
            want: (total as f64 * SHARE) as usize,
            done: false,
        }
    }

    /// One step, when `parsed` of `total` bytes are parsed (`now`: ms); nothing once all is
    /// touched, or when the memory cannot be had (the load then goes on as without).
    pub(super) fn step(&mut self, parsed: u64, total: u64, now: impl Fn() -> f64) {
        if self.done || (parsed as f64) < total as f64 * FROM {
            return;
        }
        let until = now() + STEP_MS;
        while !self.done && now() < until {
            self.done = !self.touched.grow(self.want, STEP);
        }
    }
}
