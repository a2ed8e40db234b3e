//! The page's memory for a big trace's model, touched while the workers parse.
//!
//! The page decodes the model's sections into columns it reserves whole (a 1 GB trace: ~270 MB).
//! Memory the instance grows into is slow to touch the first time (page faults behind
//! `memory.grow`, ~0.6 ms per MiB here), and those faults fell inside the hand-off, after the
//! parse, where nothing else runs beside it. Touched in small steps while the workers still parse
//! and then freed, the memory stays with the allocator and the columns reuse it.

/// MiB touched per step: ~5 ms of the page's thread.
const STEP: usize = 8 << 20;

/// The share of the file the page touches ahead: below its model (0.25-0.28x the file on the
/// synthetic and real traces measured, see BENCHMARKS), so the page's memory does not end higher
/// than the model alone takes it.
const SHARE: f64 = 0.2;

/// Parsed bytes, as a share of the file, before the first step: the preview's first screen and
/// the workers' start come first.
const FROM: f64 = 0.25;

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

    /// One step, when `parsed` of `total` bytes are parsed; nothing once all is touched, or when
    /// the memory cannot be had (the load then goes on as without).
    pub(super) fn step(&mut self, parsed: u64, total: u64) {
        if self.touched.len() >= self.want || (parsed as f64) < total as f64 * FROM {
            return;
        }
        if self.touched.capacity() == 0 && self.touched.try_reserve_exact(self.want).is_err() {
            self.want = 0;
            return;
        }
        let to = (self.touched.len() + STEP).min(self.want);
        self.touched.resize(to, 1);
    }
}
