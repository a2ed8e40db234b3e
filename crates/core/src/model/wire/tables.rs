//! The small tables of a trace on the wire: processes, tracks, metadata, warnings, strings.

use super::bad;
use super::{put_bytes, Get, Wire};
use crate::error::Result;
use crate::model::strings::{Interner, StrId};
use crate::model::trace::*;
use crate::warnings::{WarningKind, Warnings};

impl Wire for Process {
    fn put(&self, out: &mut Vec<u8>) {
        self.pid.put(out);
        self.name.put(out);
        self.labels.put(out);
        self.sort_index.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(Process {
            pid: IdVal::get(g)?,
            name: StrId::get(g)?,
            labels: StrId::get(g)?,
            sort_index: Option::get(g)?,
        })
    }
}

impl Wire for Track {
    fn put(&self, out: &mut Vec<u8>) {
        self.pid.put(out);
        self.tid.put(out);
        self.name.put(out);
        self.sort_index.put(out);
        self.kind.put(out);
        self.device.put(out);
        self.stream.put(out);
        self.first.put(out);
        self.count.put(out);
        self.max_depth.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(Track {
            pid: IdVal::get(g)?,
            tid: IdVal::get(g)?,
            name: StrId::get(g)?,
            sort_index: Option::get(g)?,
            kind: TrackKind::get(g)?,
            device: Option::get(g)?,
            stream: Option::get(g)?,
            first: u32::get(g)?,
            count: u32::get(g)?,
            max_depth: u16::get(g)?,
        })
    }
}

impl Wire for DeviceProps {
    fn put(&self, out: &mut Vec<u8>) {
        self.id.put(out);
        self.name.put(out);
        self.total_global_mem.put(out);
        self.compute_major.put(out);
        self.compute_minor.put(out);
        self.num_sms.put(out);
        self.max_threads_per_sm.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(DeviceProps {
            id: i64::get(g)?,
            name: String::get(g)?,
            total_global_mem: u64::get(g)?,
            compute_major: i64::get(g)?,
            compute_minor: i64::get(g)?,
            num_sms: i64::get(g)?,
            max_threads_per_sm: i64::get(g)?,
        })
    }
}

impl Wire for TraceMeta {
    fn put(&self, out: &mut Vec<u8>) {
        self.schema_version.put(out);
        self.trace_name.put(out);
        self.display_time_unit.put(out);
        self.base_time_ns.put(out);
        self.devices.put(out);
        let d = self.distributed.as_ref();
        d.is_some().put(out);
        if let Some(d) = d {
            d.rank.put(out);
            d.world_size.put(out);
            d.backend.put(out);
        }
        self.bare_array.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(TraceMeta {
            schema_version: Option::get(g)?,
            trace_name: Option::get(g)?,
            display_time_unit: Option::get(g)?,
            base_time_ns: Option::get(g)?,
            devices: Vec::get(g)?,
            distributed: if bool::get(g)? {
                Some(DistributedInfo {
                    rank: Option::get(g)?,
                    world_size: Option::get(g)?,
                    backend: Option::get(g)?,
                })
            } else {
                None
            },
            bare_array: bool::get(g)?,
        })
    }
}

impl Wire for Warnings {
    fn put(&self, out: &mut Vec<u8>) {
        (self.iter().count() as u32).put(out);
        for w in self.iter() {
            (WarningKind::ALL
                .iter()
                .position(|k| *k == w.kind)
                .unwrap_or(0) as u8)
                .put(out);
            w.count.put(out);
            w.examples.put(out);
        }
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        let mut w = Warnings::default();
        for _ in 0..g.count()? {
            let kind = WarningKind::ALL
                .get(u8::get(g)? as usize)
                .copied()
                .ok_or_else(|| bad("a warning kind"))?;
            let count = u64::get(g)?;
            let examples = Vec::<String>::get(g)?;
            w.push_counted(kind, count, examples);
        }
        Ok(w)
    }
}

impl Wire for Interner {
    fn put(&self, out: &mut Vec<u8>) {
        (self.len() as u32).put(out);
        for i in 0..self.len() as u32 {
            put_bytes(out, self.resolve(StrId(i)).as_bytes());
        }
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        let mut s = Interner::default();
        let n = g.count()?;
        for i in 0..n as u32 {
            // Interning in id order gives each string its id again; a duplicate would not.
            if s.intern(g.str()?) != StrId(i) {
                return Err(bad("a string table with a duplicate"));
            }
        }
        Ok(s)
    }
}
