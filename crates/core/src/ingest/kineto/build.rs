//! Appends scanned events to the columns: interning, typed-arg decoding, track lookup.

use super::args_kept::ArgsKept;
use super::columns::gpu_row;
use super::event::{ArgPair, ArgSpans, Ev};
use crate::ingest::json::{parse_f64, parse_int, RawStr};
use crate::model::time::{us_text_to_ns, MAX_ABS_NS};
use crate::model::*;
use crate::warnings::WarningKind;
use rustc_hash::FxHashMap;

/// A flow endpoint as read; resolved to a slice in `finish`.
pub(super) struct FlowEnd {
    pub cat: StrId,
    pub id: i64,
    pub ph: u8,
    pub ts: Ns,
    pub track: u32,
    /// `bp: "e"`: binds to the enclosing slice rather than the next one.
    pub enclosing: bool,
    /// `id` was a string: then it is `StrId | 1 << 62` of that string (remapped when shards merge).
    pub named: bool,
}

/// An `E` a shard could not match ([`Builder::shard`]).
pub(super) struct UnmatchedEnd {
    pub track: u32,
    pub ts: Option<Ns>,
    /// Warning kinds known when it was read (where its warning goes if it stays unmatched).
    pub kinds_before: u32,
}

/// Process metadata as read; a field is `None` until an event sets it (so a later shard's
/// events override exactly the fields they set).
#[derive(Default, Clone, Copy)]
pub(super) struct ProcMeta {
    pub name: Option<StrId>,
    pub labels: Option<StrId>,
    pub sort_index: Option<Option<i64>>,
}

/// Thread metadata as read; see [`ProcMeta`].
#[derive(Default, Clone, Copy)]
pub(super) struct ThreadMeta {
    pub name: Option<StrId>,
    pub sort_index: Option<Option<i64>>,
}

/// Top-level keys a builder assigned ([`Builder::top_set`]), so a shard that read the keys after
/// `traceEvents` overrides exactly those.
pub(super) mod top {
    pub const SCHEMA: u8 = 1;
    pub const NAME: u8 = 2;
    pub const UNIT: u8 = 4;
    pub const BASE_TIME: u8 = 8;
    pub const DEVICES: u8 = 16;
    pub const DISTRIBUTED: u8 = 32;
}

#[derive(Default)]
pub(super) struct Builder {
    pub trace: Trace,
    /// Slice columns until `finish` sorts them into `trace.slices`.
    pub staged: super::staged::StagedSlices,
    pub track_of: FxHashMap<(IdVal, IdVal), u32>,
    /// The last (pid, tid) [`Builder::track`] answered and its track, an entry of `track_of`:
    /// files write a thread's events in runs, and the hash lookup was ~2 % of a reader's time.
    pub last_track: Option<(IdVal, IdVal, u32)>,
    pub cat_kind: Vec<Option<SliceKind>>,
    pub open: FxHashMap<u32, Vec<u32>>,
    pub flow_ends: Vec<FlowEnd>,
    pub process_names: FxHashMap<IdVal, ProcMeta>,
    pub thread_names: FxHashMap<(IdVal, IdVal), ThreadMeta>,
    pub counter_series: FxHashMap<(IdVal, StrId), u32>,
    /// Reads a shard that starts after the stream's first byte ([`super::KinetoReader::shard`]):
    /// an `E` with no open `B` on its track is kept in [`Builder::unmatched_ends`] rather than
    /// warned about, since a `B` of an earlier shard may close it.
    pub shard: bool,
    /// Which args entries go into the model's args text (`args_kept.rs`).
    pub kept: ArgsKept,
    pub unmatched_ends: Vec<UnmatchedEnd>,
    /// Which top-level keys were assigned ([`top`]).
    pub top_set: u8,
    scratch: String,
    /// Offset of the event being ingested, for warnings.
    at: u64,
}

impl Builder {
    fn intern_raw(&mut self, s: RawStr<'_>) -> StrId {
        if !s.escaped {
            if let Some(id) = self.trace.strings.find_bytes(s.bytes) {
                return id;
            }
        }
        let Builder {
            trace, scratch, at, ..
        } = self;
        let (text, lossy) = s.decode_checked(scratch);
        if lossy {
            let at = *at;
            trace.warnings.add(WarningKind::InvalidUtf8, || {
                format!(
                    "{:?} at byte {at}",
                    text.chars().take(40).collect::<String>()
                )
            });
        }
        trace.strings.intern(text)
    }

    /// Interns a JSON value's text as written (shapes, types). libkineto writes identical shapes
    /// identically, so the raw text is a faithful key and costs no rewrite.
    fn intern_json(&mut self, v: &[u8]) -> StrId {
        if let Some(id) = self.trace.strings.find_bytes(v) {
            return id;
        }
        match std::str::from_utf8(v) {
            Ok(s) => self.trace.strings.intern(s),
            Err(_) => self.trace.strings.intern(&String::from_utf8_lossy(v)),
        }
    }

    fn idval(&mut self, v: Option<&[u8]>) -> IdVal {
        match v {
            None => IdVal::Int(0),
            Some([b'"', rest @ .., b'"']) => {
                // 2021 traces write the same thread as `"tid": "25738"` on slices and `25738` on flows.
                if !rest.is_empty() && rest.iter().all(u8::is_ascii_digit) {
                    if let Some(i) = parse_int(rest) {
                        return IdVal::Int(i);
                    }
                }
                let raw = RawStr {
                    bytes: rest,
                    escaped: rest.contains(&b'\\'),
                };
                let id = self.intern_raw(raw);
                IdVal::Str(id)
            }
            Some(t) => match parse_int(t) {
                Some(i) => IdVal::Int(i),
                None => IdVal::Str(self.trace.strings.intern(&String::from_utf8_lossy(t))),
            },
        }
    }

    pub(super) fn track(&mut self, pid: IdVal, tid: IdVal) -> u32 {
        if let Some((p, t, track)) = self.last_track {
            if (p, t) == (pid, tid) {
                return track;
            }
        }
        if let Some(&t) = self.track_of.get(&(pid, tid)) {
            self.last_track = Some((pid, tid, t));
            return t;
        }
        let t = self.trace.tracks.len() as u32;
        self.trace.tracks.push(Track {
            pid,
            tid,
            name: StrId::EMPTY,
            sort_index: None,
            kind: TrackKind::Cpu,
            device: None,
            stream: None,
            first: 0,
            count: 0,
            max_depth: 0,
        });
        self.track_of.insert((pid, tid), t);
        self.last_track = Some((pid, tid, t));
        t
    }

    fn kind_of(&mut self, cat: StrId) -> SliceKind {
        let i = cat.index();
        if i >= self.cat_kind.len() {
            self.cat_kind.resize(i + 1, None);
        }
        if let Some(k) = self.cat_kind[i] {
            return k;
        }
        let k = SliceKind::from_cat(self.trace.strings.resolve(cat));
        self.cat_kind[i] = Some(k);
        k
    }

    pub fn top_level(&mut self, key: &[u8], v: &[u8]) {
        let meta = &mut self.trace.meta;
        let parsed: Option<serde_json::Value> = serde_json::from_slice(v).ok();
        let Some(val) = parsed else {
            self.trace.warnings.add(WarningKind::BadMetadata, || {
                String::from_utf8_lossy(key).into_owned()
            });
            return;
        };
        let set = match key {
            b"schemaVersion" => {
                meta.schema_version = val.as_i64();
                top::SCHEMA
            }
            b"traceName" => {
                meta.trace_name = val.as_str().map(str::to_owned);
                top::NAME
            }
            b"displayTimeUnit" => {
                meta.display_time_unit = val.as_str().map(str::to_owned);
                top::UNIT
            }
            b"baseTimeNanoseconds" => {
                meta.base_time_ns = val.as_i64().or_else(|| val.as_u64().map(|u| u as i64));
                top::BASE_TIME
            }
            b"deviceProperties" | b"computeProperties" => match val.as_array() {
                Some(list) => {
                    meta.devices = list.iter().map(device_props).collect();
                    top::DEVICES
                }
                None => 0,
            },
            b"distributedInfo" => {
                meta.distributed = Some(DistributedInfo {
                    rank: val.get("rank").and_then(int_of),
                    world_size: val.get("world_size").and_then(int_of),
                    backend: val
                        .get("backend")
                        .and_then(|b| b.as_str())
                        .map(str::to_owned),
                });
                top::DISTRIBUTED
            }
            _ => 0,
        };
        self.top_set |= set;
    }

    pub fn ingest(&mut self, ev: &Ev<'_>, buf: &[u8], pairs: &[ArgPair], at: u64) {
        self.at = at;
        if ev.dup {
            self.trace
                .warnings
                .add(WarningKind::DuplicateKey, || format!("byte {at}"));
        }
        match ev.ph {
            b'X' | b'B' => self.slice(ev, buf, pairs, at),
            b'E' => self.end(ev),
            b'i' | b'I' | b'n' => self.instant(ev, buf, pairs),
            b's' | b'f' | b't' => self.flow(ev),
            b'M' => self.metadata(ev),
            b'C' => self.counter(ev),
            _ => {
                let ph = ev.ph;
                self.trace.warnings.add(WarningKind::UnsupportedPhase, || {
                    format!("ph {:?} at byte {at}", char::from(ph))
                });
            }
        }
    }

    /// The event's `ts`; `None` when absent or, with a [`WarningKind::BadTime`], unusable.
    fn ts(&mut self, ev: &Ev<'_>) -> Option<Ns> {
        let t = ev.ts?;
        let v = us_text_to_ns(t)
            // Some writers quote numbers.
            .or_else(|| us_text_to_ns(t.strip_prefix(b"\"")?.strip_suffix(b"\"")?))
            .filter(|v| v.abs() <= MAX_ABS_NS);
        if v.is_none() {
            self.bad_time("ts", t);
        }
        v
    }

    fn bad_time(&mut self, what: &str, text: &[u8]) {
        let at = self.at;
        self.trace.warnings.add(WarningKind::BadTime, || {
            let t = String::from_utf8_lossy(&text[..text.len().min(40)]);
            format!("{what} {t} at byte {at}")
        });
    }

    fn slice(&mut self, ev: &Ev<'_>, buf: &[u8], pairs: &[ArgPair], at: u64) {
        if ev.ts.is_none() {
            self.trace.warnings.add(WarningKind::MalformedEvent, || {
                format!("slice without a ts at byte {at}")
            });
            return;
        }
        let Some(start) = self.ts(ev) else { return };
        let mut dur = match (ev.ph, ev.dur) {
            (b'B', _) => -1,
            (_, Some(text)) => match us_text_to_ns(text).filter(|d| d.abs() <= MAX_ABS_NS) {
                Some(d) => d,
                None => {
                    self.bad_time("dur", text);
                    0
                }
            },
            (_, None) => {
                self.trace
                    .warnings
                    .add(WarningKind::MissingDuration, || format!("byte {at}"));
                0
            }
        };
        if dur < 0 && ev.ph == b'X' {
            self.trace
                .warnings
                .add(WarningKind::NegativeDuration, || format!("byte {at}"));
            dur = 0;
        }
        let pid = self.idval(ev.pid);
        let tid = self.idval(ev.tid);
        let track = self.track(pid, tid);
        let name = ev.name.map_or(StrId::EMPTY, |n| self.intern_raw(n));
        let cat = ev.cat.map_or(StrId::EMPTY, |c| self.intern_raw(c));
        let kind = self.kind_of(cat);
        let a = &ev.a;
        let idx = self.staged.len() as u32;
        let input_dims = a.input_dims.map_or(StrId::EMPTY, |v| self.intern_json(v));
        let input_types = a.input_types.map_or(StrId::EMPTY, |v| self.intern_json(v));
        let args = self
            .kept
            .store(&mut self.trace.args, ev, buf, pairs, Some(kind), at);
        let s = &mut self.staged;
        s.start.push(start);
        s.dur.push(dur);
        s.track.push(track);
        s.name.push(name);
        s.cat.push(cat);
        s.kind.push(kind);
        s.external_id
            .push(a.external_id.and_then(parse_int).unwrap_or(NO_ID));
        s.correlation
            .push(a.correlation.and_then(parse_int).unwrap_or(NO_ID));
        s.rf_id.push(a.rf_id.and_then(parse_int).unwrap_or(NO_ID));
        s.input_dims.push(input_dims);
        s.input_types.push(input_types);
        s.args.push(args);
        if let Some(f) = a.flops.and_then(parse_f64) {
            self.trace.flops.slice.push(idx);
            self.trace.flops.flops.push(f);
        }
        if kind.is_gpu_work() || (kind == SliceKind::GpuAnnotation && a.device.is_some()) {
            gpu_row(&mut self.trace.gpu, idx, a);
        }
        if ev.ph == b'B' {
            self.open.entry(track).or_default().push(idx);
        }
    }

    fn end(&mut self, ev: &Ev<'_>) {
        let pid = self.idval(ev.pid);
        let tid = self.idval(ev.tid);
        let track = self.track(pid, tid);
        let ts = self.ts(ev);
        let open = self.open.get_mut(&track).and_then(Vec::pop);
        if open.is_none() && self.shard {
            let kinds_before = self.trace.warnings.kinds() as u32;
            self.unmatched_ends.push(UnmatchedEnd {
                track,
                ts,
                kinds_before,
            });
            return;
        }
        self.close(open, ts);
    }

    /// Ends slice `open` (an index into the staged slices) at `ts`; without both, the `E` is
    /// unmatched.
    pub(super) fn close(&mut self, open: Option<u32>, ts: Option<Ns>) {
        match (open, ts) {
            (Some(i), Some(t)) => {
                let i = i as usize;
                self.staged
                    .dur
                    .set(i, (t - self.staged.start.get(i)).max(0));
            }
            _ => self
                .trace
                .warnings
                .add(WarningKind::UnmatchedEnd, String::new),
        }
    }

    fn instant(&mut self, ev: &Ev<'_>, buf: &[u8], pairs: &[ArgPair]) {
        let Some(ts) = self.ts(ev) else { return };
        let pid = self.idval(ev.pid);
        let tid = self.idval(ev.tid);
        let track = self.track(pid, tid);
        let is_memory = ev.name.is_some_and(|n| n.bytes == b"[memory]");
        if is_memory {
            let a = &ev.a;
            let int = |v: Option<&[u8]>| v.and_then(parse_int).unwrap_or(0);
            let m = &mut self.trace.memory;
            m.ts.push(ts);
            m.track.push(track);
            m.device_type.push(int(a.device_type) as i16);
            m.device_id.push(int(a.device_id) as i16);
            m.addr.push(int(a.addr) as u64);
            m.bytes.push(int(a.bytes));
            m.total_allocated.push(int(a.total_allocated));
            m.total_reserved.push(int(a.total_reserved));
            return;
        }
        let name = ev.name.map_or(StrId::EMPTY, |n| self.intern_raw(n));
        let cat = ev.cat.map_or(StrId::EMPTY, |c| self.intern_raw(c));
        let args = self
            .kept
            .store(&mut self.trace.args, ev, buf, pairs, None, self.at);
        let i = &mut self.trace.instants;
        i.ts.push(ts);
        i.track.push(track);
        i.name.push(name);
        i.cat.push(cat);
        i.args.push(args);
    }

    fn flow(&mut self, ev: &Ev<'_>) {
        let Some(ts) = self.ts(ev) else { return };
        let pid = self.idval(ev.pid);
        let tid = self.idval(ev.tid);
        let track = self.track(pid, tid);
        let cat = ev.cat.map_or(StrId::EMPTY, |c| self.intern_raw(c));
        let mut named = false;
        let id = match ev.id {
            Some([b'"', rest @ .., b'"']) => parse_int(rest).unwrap_or_else(|| {
                named = true;
                i64::from(self.trace.strings.intern(&String::from_utf8_lossy(rest)).0) | (1 << 62)
            }),
            Some(t) => parse_int(t).unwrap_or(NO_ID),
            None => NO_ID,
        };
        let enclosing = ev.bp.is_some_and(|b| b.bytes == b"e");
        self.flow_ends.push(FlowEnd {
            cat,
            id,
            ph: ev.ph,
            ts,
            track,
            enclosing,
            named,
        });
    }

    fn metadata(&mut self, ev: &Ev<'_>) {
        let pid = self.idval(ev.pid);
        let which = ev.name.map(|n| n.bytes).unwrap_or_default();
        let a: &ArgSpans<'_> = &ev.a;
        let text = |b: &mut Builder, v: Option<&[u8]>| -> StrId {
            match v {
                Some([b'"', rest @ .., b'"']) => {
                    let raw = RawStr {
                        bytes: rest,
                        escaped: rest.contains(&b'\\'),
                    };
                    b.intern_raw(raw)
                }
                Some(other) => b.trace.strings.intern(&String::from_utf8_lossy(other)),
                None => StrId::EMPTY,
            }
        };
        match which {
            b"process_name" => {
                let n = text(self, a.name);
                self.process_names.entry(pid).or_default().name = Some(n);
            }
            b"process_labels" => {
                let n = text(self, a.labels);
                self.process_names.entry(pid).or_default().labels = Some(n);
            }
            b"process_sort_index" => {
                let s = a.sort_index.and_then(parse_int);
                self.process_names.entry(pid).or_default().sort_index = Some(s);
            }
            b"thread_name" => {
                let tid = self.idval(ev.tid);
                let n = text(self, a.name);
                self.thread_names.entry((pid, tid)).or_default().name = Some(n);
            }
            b"thread_sort_index" => {
                let tid = self.idval(ev.tid);
                let s = a.sort_index.and_then(parse_int);
                self.thread_names.entry((pid, tid)).or_default().sort_index = Some(s);
            }
            _ => {}
        }
    }

    fn counter(&mut self, ev: &Ev<'_>) {
        let Some(ts) = self.ts(ev) else { return };
        let Some(args) = ev.args else { return };
        let Ok(map) = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(args)
        else {
            self.trace
                .warnings
                .add(WarningKind::MalformedEvent, || "counter args".into());
            return;
        };
        let pid = self.idval(ev.pid);
        let base = ev
            .name
            .map(|n| n.decode(&mut self.scratch).to_owned())
            .unwrap_or_default();
        for (k, v) in &map {
            let Some(x) = v.as_f64() else { continue };
            let label = if map.len() == 1 && (k == "value" || *k == base) {
                base.clone()
            } else {
                format!("{base} {k}")
            };
            let name = self.trace.strings.intern(&label);
            let next = self.trace.counters.series_name.len() as u32;
            let series = *self.counter_series.entry((pid, name)).or_insert(next);
            if series == next {
                self.trace.counters.series_name.push(name);
                self.trace.counters.series_pid.push(pid);
            }
            let c = &mut self.trace.counters;
            c.series.push(series);
            c.ts.push(ts);
            c.value.push(x);
        }
    }
}

fn int_of(v: &serde_json::Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

fn device_props(v: &serde_json::Value) -> DeviceProps {
    let i = |k: &str| v.get(k).and_then(int_of).unwrap_or(0);
    DeviceProps {
        id: i("id"),
        name: v
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or("")
            .to_owned(),
        total_global_mem: v
            .get("totalGlobalMem")
            .and_then(|n| n.as_u64())
            .unwrap_or(0),
        compute_major: i("computeMajor"),
        compute_minor: i("computeMinor"),
        num_sms: i("numSms"),
        max_threads_per_sm: v
            .get("maxThreadsPerMultiprocessor")
            .or_else(|| v.get("maxThreadsPerMultiProcessor"))
            .and_then(int_of)
            .unwrap_or(0),
    }
}
