//! The demo is the first thing a user sees: its numbers must be ones a real H100 could produce.
//! (Its first shapes gave 3.5× the bf16 tensor-core peak, an Overview MFU of 159%.)

use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::report::analysis::Analysis;
use tracelight_synth::{generate, Config};

#[test]
fn every_op_of_the_demo_stays_under_the_h100_peak() {
    let cfg = Config {
        steps: 3,
        layers: 2,
        ..Config::default()
    };
    let mut bytes = Vec::new();
    if let Err(e) = generate(&cfg, &mut bytes) {
        panic!("writing to a Vec: {e}");
    }
    let Ok(Loaded::Trace(t)) = load_bytes("demo.json", &bytes) else {
        panic!("the generated trace does not load as a trace");
    };
    let f = Analysis::of("demo.json", &t).flops;
    // NVIDIA's H100 SXM datasheet: 1,979 TFLOPS bf16 with sparsity, so 989.5 dense.
    let Some(peak) = f.peak_tflops else {
        panic!("an H100 peak is known")
    };
    assert!((peak - 989.5).abs() < 1e-9, "{peak} {:?}", f.peak_source);
    assert!(!f.per_op.is_empty());
    for op in &f.per_op {
        let Some(mfu) = op.mfu else {
            panic!("{}: an H100 peak is known", op.name)
        };
        assert!(
            mfu > 0.05 && mfu < 0.9,
            "{} at {:.0}% of its peak",
            op.name,
            mfu * 100.0
        );
    }
    let Some(mfu) = f.mfu else {
        panic!("an H100 peak is known")
    };
    assert!(mfu > 0.05 && mfu < 0.9, "trace MFU {:.0}%", mfu * 100.0);
}
