//! The dispatcher: the usage text and the subcommands of the CLI contract (docs/cli.md), each in
//! its own module. The top layer: it imports the subcommands, none of them imports it (what they
//! share is in `input` and `memory`); `load` and `CliError` are re-exported for the Python package.

pub use crate::input::{load, CliError};
pub use crate::memory::{memory_json, memory_markdown, MemoryFile};

pub const USAGE: &str = "usage:
  tracelight summary FILE...|DIR       Markdown summary (DIR: a run folder, all its ranks)
  tracelight analyze FILE...|DIR --json
                                       one JSON object with the analytics
  tracelight table FILE [--sort-by KEY] [--row-limit N] [--group-by-input-shape] [--with-flops]
                                       key_averages()-style operator table
  tracelight table FILE --modules | --source-lines | --backward
                                       the nn.Module tree with host/GPU time (forward and
                                       backward), GPU time by line of user code, forward op
                                       <-> backward node
  summary, analyze and table take --scope SCOPE (trace files): the tables of one part of
  the trace. SCOPE is step:N (ProfilerStep#N), annotation:NAME (every record_function
  region named NAME) or annotation:NAME:K (its K-th, from 1), or window:START_NS-END_NS
  (trace ns). Ops count when they start inside, whole; kernels when the call that launched
  them does; utilization and the step breakdown are over the windows
  tracelight diff A B [--json] [--group-by-input-shape] [--no-renames]
                                       A/B diff of two traces or run folders: per-step
                                       overview, verdict, matched ops and kernels
                                       (--no-renames: match by exact name only)
  tracelight diff A B --fail-if BOUND [--fail-if BOUND]... [--strict] [--json]
                                       CI gate: exit 1 when B crossed a bound, e.g.
                                       'step_time>+5%' 'peak_memory>+10%' 'gpu_utilization<-5pp'
                                       (names: the keys of --json's 'figures'); per-step
                                       figures compared as distributions; --strict also
                                       fails when the runs are too short or noisy to tell
  tracelight diff A.pickle B.pickle [--json]
                                       two allocator snapshots (sniffed from content): totals,
                                       fragmentation and segments before/after, live bytes by
                                       allocation site, stack, user_metadata and pool (appeared,
                                       grew, shrank, freed)
  tracelight diff A B --folded [--weight cpu|device] [--step-a I] [--step-b J]
                                       the differential flame graph's stacks: 'frame;…;leaf A B'
                                       (ns per step; difffolded.pl's format, flamegraph.pl draws it)
  tracelight trend DIR [--json]        a folder of runs (trace files or run folders, in name
                                       order) as a series: step time, breakdown, top kernels,
                                       peak memory per run; change points marked
  tracelight view PATH... [--port N] [--no-browser]
                                       serve the app and these traces, run folders or
                                       digests on 127.0.0.1 (a random port and token) and
                                       open the browser; over SSH, print the URL and the
                                       ssh -L line that reaches it. Ctrl-C stops it
  tracelight mcp                       a Model Context Protocol server on stdio for coding
                                       agents: the analyses as tools answering compact JSON
  tracelight digest TRACE... -o DIR    a compact per-rank digest of each trace (JSON header +
                                       Parquet tables); summary/analyze DIR read a folder of
                                       digests as the run";

/// What the `tracelight` command does with `args`, short of touching the process: the bytes of
/// its stdout and stderr and its exit code (0, 1 when `diff --fail-if` found a bound crossed, 2 on
/// unreadable input, 64 on a usage error). The binary (`main.rs`) writes them; so does the Python
/// package's `tracelight` console script, so the two are one command, byte for byte.
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub code: u8,
}

pub fn outcome(args: &[String]) -> Outcome {
    let (stdout, (stderr, code)) = match run_code(args) {
        Ok((out, code)) => (out, (String::new(), code)),
        Err(e) => (String::new(), failure(e)),
    };
    Outcome {
        stdout,
        stderr,
        code,
    }
}

/// What stderr says of an error, and the exit code.
fn failure(e: CliError) -> (String, u8) {
    match e {
        CliError::Input(e) => (format!("tracelight: {e}\n"), 2),
        CliError::Usage(m) => (format!("tracelight: {m}\n\n{USAGE}\n"), 64),
    }
}

/// The subcommands that run until stopped and write as they go (`view`, `mcp`), which
/// [`outcome`] cannot hold: their exit code, having written to the process's stdout and stderr;
/// `None` for every other command. `stop` is asked a few times a second (the Python console
/// script passes its Ctrl-C check; the binary is ended by the signal itself).
pub fn interactive(args: &[String], stop: &dyn Fn() -> bool) -> Option<u8> {
    let (cmd, rest) = args.split_first()?;
    let result = match cmd.as_str() {
        "view" => crate::view::view(rest, &mut std::io::stdout(), stop),
        "mcp" => crate::mcp::mcp(rest, stop),
        _ => return None,
    };
    Some(match result {
        Ok(()) => 0,
        Err(e) => {
            let (text, code) = failure(e);
            let _ = std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes());
            code
        }
    })
}

pub fn run(args: &[String]) -> Result<String, CliError> {
    run_code(args).map(|x| x.0)
}

/// [`run`] with the exit code of a successful run: 0, or 1 when `diff --fail-if` found a bound
/// crossed (the text is printed either way).
pub fn run_code(args: &[String]) -> Result<(String, u8), CliError> {
    let Some((cmd, rest)) = args.split_first() else {
        return Err(CliError::Usage("no command".into()));
    };
    if cmd == "diff" {
        return crate::diff::diff_code(rest);
    }
    let out = match cmd.as_str() {
        "summary" | "analyze" => crate::analyze::summary_or_analyze(cmd, rest),
        "table" => crate::analyze::table(rest),
        "digest" => crate::digest::digest(rest),
        "trend" => crate::trend::trend(rest),
        "--help" | "-h" | "help" => Ok(format!("{USAGE}\n")),
        other => Err(CliError::Usage(format!("unknown command {other:?}"))),
    }?;
    Ok((out, 0))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    const SNAP: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/real/snapshots/cs336_silmont_tiny_mem_snapshot.pickle"
    );

    #[test]
    fn analyze_json_of_a_snapshot_has_files_and_the_snapshot_block() {
        if std::fs::metadata(SNAP).is_err() {
            println!("note: {SNAP} absent; skipping");
            return;
        }
        let args: Vec<String> = ["analyze", SNAP, "--json"].map(String::from).to_vec();
        let Ok(out) = run(&args) else {
            panic!("analyze failed")
        };
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["files"][0]["format"], "cuda_snapshot");
        assert_eq!(v["files"][0]["events"], 9 + 97);
        let d = &v["snapshot"]["devices"][0];
        // Values from crates/core/tests/scripts/snapshot_expected.py.
        assert_eq!(d["segments"], 9);
        assert_eq!(d["reserved_bytes"], 3_781_165_056u64);
        assert_eq!(d["peak_active_bytes"], 3_249_143_816u64);
        assert_eq!(d["actions"]["alloc"], 36);
        let Ok(md) = run(&["summary".to_owned(), SNAP.to_owned()]) else {
            panic!("summary failed")
        };
        assert!(md.contains("CUDA memory snapshot"));
    }
}
