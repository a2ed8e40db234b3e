//! `tracelight-synth OUT [--steps N | --target-mb M] [--seed S] [--layers L]`
//!
//! Writes a Kineto trace shaped like a real single-GPU transformer training run, `.gz` if OUT ends so.

use std::io::Write;
use tracelight_synth::{generate, Config};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first().cloned() else {
        eprintln!(
            "usage: tracelight-synth OUT [--steps N | --target-mb M] [--seed S] [--layers L]"
        );
        return std::process::ExitCode::from(64);
    };
    let mut cfg = Config::default();
    let mut it = args.iter().skip(1);
    while let Some(flag) = it.next() {
        let val = it.next().and_then(|v| v.parse::<u64>().ok());
        match (flag.as_str(), val) {
            ("--steps", Some(v)) => cfg.steps = v as u32,
            ("--target-mb", Some(v)) => cfg.target_bytes = Some(v << 20),
            ("--seed", Some(v)) => cfg.seed = v,
            ("--layers", Some(v)) => cfg.layers = v as u32,
            _ => {
                eprintln!("tracelight-synth: bad argument {flag}");
                return std::process::ExitCode::from(64);
            }
        }
    }
    let res = (|| -> std::io::Result<u64> {
        let f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&out)?);
        if out.ends_with(".gz") {
            let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::new(6));
            let n = generate(&cfg, &mut gz)?;
            gz.finish()?.flush()?;
            Ok(n)
        } else {
            let mut f = f;
            let n = generate(&cfg, &mut f)?;
            f.flush()?;
            Ok(n)
        }
    })();
    match res {
        Ok(n) => {
            eprintln!("wrote {out}: {n} events");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tracelight-synth: {out}: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
