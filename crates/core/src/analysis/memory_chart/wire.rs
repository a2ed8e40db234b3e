//! A [`MemoryChart`] in `model::wire`'s encoding, so the snapshot worker that built the chart can
//! hand it to the page (`report::snapshot_wire`). Band points and the entry positions are the bulk;
//! the header (lines, markers, band kinds) is small.

use super::{Band, BandKind, Line, Marker, MarkerKind, MemoryChart, XUnit};
use crate::error::Result;
use crate::model::wire::{bad, Get, Wire};

/// The line names a chart uses (`Line::name` is `'static`): a name read back must be one of them.
const LINE_NAMES: [&str; 1] = ["reserved"];

fn put_usize(v: Option<usize>, out: &mut Vec<u8>) {
    v.map(|x| x as u64).put(out);
}

fn get_usize(g: &mut Get<'_>) -> Result<Option<usize>> {
    Option::<u64>::get(g)?
        .map(|x| usize::try_from(x).map_err(|_| bad("an index")))
        .transpose()
}

impl Wire for XUnit {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(match self {
            XUnit::Ns => 0,
            XUnit::Index => 1,
        });
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        match u8::get(g)? {
            0 => Ok(XUnit::Ns),
            1 => Ok(XUnit::Index),
            _ => Err(bad("a chart unit")),
        }
    }
}

impl Wire for BandKind {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            BandKind::Alloc {
                addr,
                size,
                stack,
                alloc_index,
                free_index,
            } => {
                out.push(0);
                addr.put(out);
                size.put(out);
                stack.put(out);
                put_usize(*alloc_index, out);
                put_usize(*free_index, out);
            }
            BandKind::Summarized { count } => {
                out.push(1);
                count.put(out);
            }
            BandKind::Category(c) => {
                out.push(2);
                c.put(out);
            }
            BandKind::Allocated => out.push(3),
        }
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(match u8::get(g)? {
            0 => BandKind::Alloc {
                addr: u64::get(g)?,
                size: u64::get(g)?,
                stack: u32::get(g)?,
                alloc_index: get_usize(g)?,
                free_index: get_usize(g)?,
            },
            1 => BandKind::Summarized {
                count: u64::get(g)?,
            },
            2 => BandKind::Category(u8::get(g)?),
            3 => BandKind::Allocated,
            _ => return Err(bad("a band kind")),
        })
    }
}

impl Wire for Band {
    fn put(&self, out: &mut Vec<u8>) {
        self.kind.put(out);
        self.x.put(out);
        self.lo.put(out);
        self.hi.put(out);
        self.end.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        let b = Band {
            kind: BandKind::get(g)?,
            x: Vec::get(g)?,
            lo: Vec::get(g)?,
            hi: Vec::get(g)?,
            end: i64::get(g)?,
        };
        if b.lo.len() != b.x.len() || b.hi.len() != b.x.len() {
            return Err(bad("a band whose columns differ in length"));
        }
        Ok(b)
    }
}

impl Wire for Line {
    fn put(&self, out: &mut Vec<u8>) {
        self.name.to_owned().put(out);
        self.x.put(out);
        self.y.put(out);
        self.end.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        let name = g.str()?;
        let name = LINE_NAMES
            .iter()
            .find(|n| **n == name)
            .ok_or_else(|| bad("a line name"))?;
        let l = Line {
            name,
            x: Vec::get(g)?,
            y: Vec::get(g)?,
            end: i64::get(g)?,
        };
        if l.y.len() != l.x.len() {
            return Err(bad("a line whose columns differ in length"));
        }
        Ok(l)
    }
}

impl Wire for Marker {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(match self.kind {
            MarkerKind::Peak => 0,
            MarkerKind::Oom => 1,
        });
        self.x.put(out);
        self.bytes.put(out);
        self.label.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        let kind = match u8::get(g)? {
            0 => MarkerKind::Peak,
            1 => MarkerKind::Oom,
            _ => return Err(bad("a marker kind")),
        };
        Ok(Marker {
            kind,
            x: i64::get(g)?,
            bytes: u64::get(g)?,
            label: String::get(g)?,
        })
    }
}

/// A chart's small fields: everything but its bands and entry positions, which travel in pieces.
pub struct Head {
    pub unit: XUnit,
    pub epoch: bool,
    pub x_range: (i64, i64),
    pub y_max: u64,
    pub lines: Vec<Line>,
    pub markers: Vec<Marker>,
    pub peak: (i64, u64),
    pub bands: u32,
    pub entries: u32,
}

impl Head {
    pub fn of(c: &MemoryChart) -> Head {
        Head {
            unit: c.unit,
            epoch: c.epoch,
            x_range: c.x_range,
            y_max: c.y_max,
            lines: c.lines.clone(),
            markers: c.markers.clone(),
            peak: c.peak,
            bands: c.bands.len() as u32,
            entries: c.entry_x.len() as u32,
        }
    }

    /// The chart with no bands or entries yet.
    pub fn chart(self) -> MemoryChart {
        MemoryChart {
            unit: self.unit,
            epoch: self.epoch,
            x_range: self.x_range,
            y_max: self.y_max,
            bands: Vec::with_capacity(self.bands as usize),
            lines: self.lines,
            markers: self.markers,
            peak: self.peak,
            entry_x: Vec::new(),
        }
    }
}

impl Wire for Head {
    fn put(&self, out: &mut Vec<u8>) {
        self.unit.put(out);
        self.epoch.put(out);
        self.x_range.put(out);
        self.y_max.put(out);
        self.lines.put(out);
        self.markers.put(out);
        self.peak.put(out);
        self.bands.put(out);
        self.entries.put(out);
    }
    fn get(g: &mut Get<'_>) -> Result<Self> {
        Ok(Head {
            unit: XUnit::get(g)?,
            epoch: bool::get(g)?,
            x_range: <(i64, i64)>::get(g)?,
            y_max: u64::get(g)?,
            lines: Vec::get(g)?,
            markers: Vec::get(g)?,
            peak: <(i64, u64)>::get(g)?,
            bands: u32::get(g)?,
            entries: u32::get(g)?,
        })
    }
}
