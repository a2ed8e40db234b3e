//! Chakra execution traces: the host-side JSON written by PyTorch's `ExecutionTraceObserver`
//! (`torch.profiler.ExecutionTraceObserver`, `torch/csrc/profiler/standalone/execution_trace_observer.cpp`).
//!
//! Format (<https://github.com/mlcommons/chakra/wiki/Chakra-Execution-Trace-Collection-%E2%80%90-A-Comprehensive-Guide-on-Merging-PyTorch-and-Kineto-Traces>,
//! and the observer's source): one JSON object with `schema`, `pid`, `time`, `start_ts`, `nodes[]`,
//! `finish_ts`. Every op the RecordFunction machinery sees is one node, written when it ends.
//!
//! Supported:
//! - schema `1.0.1` (ExecutionGraphObserver era): flat node fields `id`, `name`, `parent`, `rf_id`,
//!   `fw_parent`, `seq_id`, `scope`, `tid`, `fw_tid`, `op_schema`, `inputs` (values),
//!   `input_shapes`, `input_types`, `outputs`, `output_shapes`, `output_types`;
//! - schemas `1.1.0-chakra.0.0.4` and `1.1.1-chakra.0.0.4`: `id`, `name`, `ctrl_deps` (the parent),
//!   `inputs`/`outputs` as `{values, shapes, types, strides}`, and `attrs[]` of `{name, type, value}`
//!   (`rf_id`, `fw_parent`, `seq_id`, `scope`, `tid`, `fw_tid`, `op_schema`, `kernel_backend`,
//!   `kernel_file` in columns; collective attributes — `collective_name`, `dtype`, `in_msg_nelems`,
//!   `out_msg_nelems`, `in/out_split_size`, `global_rank_start/stride`, `pg_name`, `pg_desc`,
//!   `pg_size` — and anything newer kept by name);
//! - a tensor value `[tensor_id, storage_id, offset, numel, itemsize, device]` is decoded for every
//!   `Tensor(…)`-typed input or output; other values are kept as compact JSON text.
//!
//! Wrong shapes never panic: a top level that is not an object, no `nodes`, or `nodes` that is not an
//! array is an error; a node that is not an object, has no `id`, or has a field of the wrong type is
//! a counted warning (the node is skipped, or kept without that field). A cut file keeps the nodes
//! before the cut with a `Truncated` warning.
//!
//! The reader is push-based like the Kineto one: it keeps only the unfinished tail of the last node
//! between slices, and builds columns directly (no JSON tree per node).

mod node;

use crate::error::{Error, ErrorKind, Result};
use crate::ingest::json::{parse_int, Cursor, Stop};
use crate::model::exec_trace::ExecTrace;
use crate::model::NO_ID;
use crate::warnings::WarningKind;
use node::Scratch;

/// One node may not be larger than this (a hostile file that is one giant node).
const MAX_VALUE_BYTES: usize = 256 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    TopKeys,
    Nodes,
    Done,
}

/// Streaming reader; see the module docs.
pub struct ChakraReader {
    buf: Vec<u8>,
    /// Offset in the decoded stream of `buf[0]`.
    base: u64,
    state: State,
    saw_nodes: bool,
    et: ExecTrace,
    scratch: Scratch,
}

impl Default for ChakraReader {
    fn default() -> Self {
        Self::new()
    }
}

impl ChakraReader {
    pub fn new() -> Self {
        let et = ExecTrace {
            start_ts: NO_ID,
            finish_ts: NO_ID,
            pid: NO_ID,
            ..ExecTrace::default()
        };
        ChakraReader {
            buf: Vec::new(),
            base: 0,
            state: State::Start,
            saw_nodes: false,
            et,
            scratch: Scratch::default(),
        }
    }

    /// Nodes read so far.
    pub fn nodes(&self) -> u64 {
        self.et.nodes.len() as u64
    }

    /// Feeds the next slice of the decoded stream.
    pub fn push(&mut self, data: &[u8]) -> Result<()> {
        let mut pos = 0;
        if !self.buf.is_empty() {
            // Finish the node cut by the previous slice, growing the carry-over in small steps.
            loop {
                let take = (data.len() - pos).min(64 << 10);
                self.buf.extend_from_slice(&data[pos..pos + take]);
                pos += take;
                let used = self.run()?;
                if used > 0 {
                    self.base += used as u64;
                    let leftover = self.buf.len() - used;
                    if leftover <= take {
                        pos -= leftover;
                        self.buf.clear();
                        break;
                    }
                    self.buf.drain(..used);
                }
                if pos == data.len() {
                    return self.check_pending();
                }
            }
        }
        let rest = &data[pos..];
        let used = self.run_on(rest)?;
        self.base += used as u64;
        self.buf.extend_from_slice(&rest[used..]);
        self.check_pending()
    }

    fn check_pending(&self) -> Result<()> {
        if self.buf.len() > MAX_VALUE_BYTES {
            return Err(Error::new(
                ErrorKind::Limit(format!(
                    "one execution-trace node is larger than {} MiB",
                    MAX_VALUE_BYTES >> 20
                )),
                self.base,
            ));
        }
        Ok(())
    }

    /// Ends the stream and returns the model.
    pub fn finish(mut self) -> Result<ExecTrace> {
        self.buf.push(b' ');
        let used = self.run()?;
        self.base += used as u64;
        let at = self.base;
        match self.state {
            State::Done => {}
            State::Start => {
                return Err(Error::new(
                    ErrorKind::Incompatible("the file is empty".into()),
                    0,
                ))
            }
            State::TopKeys | State::Nodes => {
                if self.et.nodes.is_empty() {
                    return Err(Error::new(ErrorKind::Truncated, at));
                }
                let dropped = self.buf.len().saturating_sub(used + 1);
                self.et.warnings.add(WarningKind::Truncated, || {
                    format!("stream ends at byte {} inside an unfinished node ({dropped} bytes dropped)", at + dropped as u64)
                });
            }
        }
        if !self.saw_nodes {
            return Err(Error::new(
                ErrorKind::Syntax("an execution trace without `nodes`".into()),
                at,
            ));
        }
        self.et.bytes_read = self.base;
        Ok(self.et)
    }

    fn run(&mut self) -> Result<usize> {
        let buf = std::mem::take(&mut self.buf);
        let r = self.run_on(&buf);
        self.buf = buf;
        r
    }

    fn run_on(&mut self, buf: &[u8]) -> Result<usize> {
        let mut c = Cursor::new(buf, 0);
        let base = self.base;
        let err = |kind: ErrorKind, at: usize| Error::new(kind, base + at as u64);
        loop {
            let mark = c.i;
            match self.state {
                State::Start => {
                    if buf.starts_with(b"\xEF\xBB\xBF") && c.i == 0 {
                        c.i = 3;
                    }
                    match c.peek() {
                        Ok(b'{') => {
                            c.i += 1;
                            self.state = State::TopKeys;
                        }
                        Ok(_) => {
                            return Err(err(
                                ErrorKind::Incompatible(
                                    "an execution trace is a JSON object".into(),
                                ),
                                c.i,
                            ))
                        }
                        Err(_) => return Ok(mark),
                    }
                }
                State::TopKeys => match c.peek() {
                    Err(_) => return Ok(mark),
                    Ok(b'}') => {
                        c.i += 1;
                        self.state = State::Done;
                    }
                    Ok(b',') => c.i += 1,
                    Ok(_) => match self.top_key(&mut c) {
                        Ok(()) => {}
                        Err(Stop::Incomplete) => return Ok(mark),
                        Err(Stop::Syntax(m)) => return Err(err(ErrorKind::Syntax(m.into()), c.i)),
                    },
                },
                State::Nodes => match c.peek() {
                    Err(_) => return Ok(mark),
                    Ok(b']') => {
                        c.i += 1;
                        self.state = State::TopKeys;
                    }
                    Ok(b',') => c.i += 1,
                    Ok(b'{') => {
                        let at = base + mark as u64;
                        match self.scratch.scan(&mut c) {
                            Ok(()) => self.scratch.commit(buf, &mut self.et, at),
                            Err(Stop::Incomplete) => return Ok(mark),
                            Err(Stop::Syntax(m)) => {
                                // Skip the whole node if its brackets balance; else give up here.
                                c.i = mark;
                                match c.value() {
                                    Ok(_) => {
                                        self.et.warnings.add(WarningKind::MalformedEvent, || {
                                            format!("node skipped: {m} at byte {at}")
                                        })
                                    }
                                    Err(Stop::Incomplete) => return Ok(mark),
                                    Err(Stop::Syntax(m2)) => {
                                        return Err(err(ErrorKind::Syntax(m2.into()), c.i))
                                    }
                                }
                            }
                        }
                    }
                    Ok(_) => match c.value() {
                        Ok(_) => {
                            let at = base + mark as u64;
                            self.et.warnings.add(WarningKind::MalformedEvent, || {
                                format!("a `nodes` entry that is not an object at byte {at}")
                            });
                        }
                        Err(Stop::Incomplete) => return Ok(mark),
                        Err(Stop::Syntax(m)) => return Err(err(ErrorKind::Syntax(m.into()), c.i)),
                    },
                },
                State::Done => return Ok(buf.len()),
            }
        }
    }

    fn top_key(&mut self, c: &mut Cursor<'_>) -> Result<(), Stop> {
        let key = c.string()?;
        c.expect(b':', "expected ':' after a top-level key")?;
        if key.bytes == b"nodes" {
            if c.peek()? == b'[' {
                c.i += 1;
                self.saw_nodes = true;
                self.state = State::Nodes;
                return Ok(());
            }
            // Not recoverable: without the node array there is nothing to show.
            return Err(Stop::Syntax(
                "`nodes` is not an array (an execution trace lists its nodes in one)",
            ));
        }
        let v = c.value()?;
        let text = |v: &[u8]| -> String {
            let mut s = String::new();
            let mut vc = Cursor::new(v, 0);
            match vc.string() {
                Ok(r) => r.decode(&mut s).to_owned(),
                Err(_) => String::from_utf8_lossy(v).into_owned(),
            }
        };
        let int = |v: &[u8]| parse_int(v).unwrap_or(NO_ID);
        match key.bytes {
            b"schema" => self.et.schema = text(v),
            b"time" => self.et.time = text(v),
            b"pid" => self.et.pid = int(v),
            b"start_ts" => self.et.start_ts = int(v),
            b"finish_ts" => self.et.finish_ts = int(v),
            _ => {}
        }
        Ok(())
    }
}

/// Reads a whole in-memory execution trace (tests, small files).
pub fn read_chakra(bytes: &[u8]) -> Result<ExecTrace> {
    let mut r = ChakraReader::new();
    r.push(bytes)?;
    r.finish()
}
