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

#[derive(Default)]
pub(super) struct Prefault {
    touched: Vec<u8>,
    want: usize,
}

impl Prefault {
    /// For a file of `total` bytes read in workers.
    pub(super) fn for_file(total: u64) -> Self {
        Self {
            touched: Vec::new(),
            want: (total as f64 * SHARE) as usize,
        }
    }

    /// One step, when `parsed` of `total` bytes are parsed (`now`: ms); nothing once all is
    /// touched, or when the memory cannot be had (the load then goes on as without).
    pub(super) fn step(&mut self, parsed: u64, total: u64, now: impl Fn() -> f64) {
        if self.touched.len() >= self.want || (parsed as f64) < total as f64 * FROM {
            return;
        }
        if self.touched.capacity() == 0 && self.touched.try_reserve_exact(self.want).is_err() {
            self.want = 0;
            return;
        }
        let until = now() + STEP_MS;
        while self.touched.len() < self.want && now() < until {
            let to = (self.touched.len() + STEP).min(self.want);
            self.touched.resize(to, 1);
        }
    }
}
