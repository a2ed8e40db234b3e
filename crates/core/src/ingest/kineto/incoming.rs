//! A shard read in another worker's wasm instance, arriving as its sections (`shard_wire.rs`) and
//! merged as they arrive: its strings and tracks are mapped once its state section is in, and each
//! staged slice column is then decoded straight onto the merged reader's column. Decoded whole
//! first, a shard's columns stood beside the merged ones until appended, most of the merge's peak
//! (0.30x -> 0.38x a 304 MB file natively) and, in wasm, memory the later exact-size columns could
//! not reuse.

use super::shard::MergeMaps;
use super::shard_wire::{check_rest, ShardDecoder};
use super::staged::StagedSlices;
use super::{KinetoReader, Sink};
use crate::error::Result;
use crate::model::wire::{bad, Get, Wire};
use crate::model::StrId;

/// The staged slice columns a shard sends, in `shard_wire`'s order (`staged_columns!`), the
/// args last.
const COLUMNS: usize = 12;

/// A shard arriving section by section ([`KinetoReader::incoming`], [`IncomingShard::first`]).
pub struct IncomingShard {
    start: u64,
    /// Its sections, the status section included.
    count: usize,
    /// The shard's decoder, once its status section said it has no error.
    decoder: Option<ShardDecoder>,
    /// Slices its staged columns are made to hold as one block each (0: chunks).
    reserve: usize,
    /// Once its state section is read (a shard merged into a reader): the shard without slices.
    onto: Option<Onto>,
    /// Staged columns merged so far.
    cols: usize,
}

/// A shard being merged column by column.
struct Onto {
    shard: KinetoReader,
    maps: Option<MergeMaps>,
    /// Its slices, from its first column's section.
    n: usize,
}

/// What [`KinetoReader::merge_sections`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    Merged,
    /// The cut was not an event boundary: the shard's bytes must be read here instead.
    NotABoundary,
}

impl IncomingShard {
    /// The stream's first shard (from byte 0, read by `KinetoReader::new`), `count` sections with
    /// its status section, for a worker that read nothing itself and merges every shard into it
    /// ([`IncomingShard::into_reader`], then [`KinetoReader::incoming`] for the next). `slices`:
    /// the slices of every shard together, when known (else 0): each staged column is then one
    /// block of that length, so the finish's exact-size columns reuse the blocks it lets go. In the
    /// worker that read the first shard, its chunks' holes fit none of them and the finish grew
    /// the instance by a whole model's slices (0.44x a 1 GB file at its peak).
    pub fn first(count: usize, slices: usize) -> Result<IncomingShard> {
        if count == 0 {
            return Err(bad("shard sections missing"));
        }
        Ok(IncomingShard {
            start: 0,
            count,
            decoder: None,
            reserve: slices,
            onto: None,
            cols: 0,
        })
    }

    /// Takes the next section of a shard made by [`IncomingShard::first`]: the status first (the
    /// shard's own error, returned here), then the shard's.
    pub fn push(&mut self, section: &[u8]) -> Result<()> {
        match &mut self.decoder {
            Some(d) => d.push(section),
            None => self.status(section),
        }
    }

    fn status(&mut self, section: &[u8]) -> Result<()> {
        let mut g = Get::new(section);
        if let Some(e) = <Option<crate::Error> as Wire>::get(&mut g)? {
            return Err(e);
        }
        self.decoder = Some(ShardDecoder::new(self.count - 1)?.reserve(self.reserve));
        Ok(())
    }

    /// The reader of a shard made by [`IncomingShard::first`], once its sections were all given.
    pub fn into_reader(self) -> Result<KinetoReader> {
        let Some(d) = self.decoder else {
            return Err(bad("shard sections missing"));
        };
        d.finish()
    }
}

impl KinetoReader {
    /// [`KinetoReader::absorb`] for a shard read in another wasm instance, as its sections
    /// (`shard_wire.rs`) after a status section (`None`, or the error that stopped it). When the cut
    /// was not an event boundary the caller must push the shard's bytes itself.
    pub fn merge_sections(&mut self, start: u64, bare: bool, sections: &[&[u8]]) -> Result<Merge> {
        let Some(mut inc) = self.incoming(start, bare, sections.len())? else {
            return Ok(Merge::NotABoundary);
        };
        for s in sections {
            self.absorb_section(&mut inc, s)?;
        }
        self.merge_incoming(inc)?;
        Ok(Merge::Merged)
    }

    /// [`KinetoReader::merge_sections`] one section at a time: the shard that starts at `start`,
    /// `count` sections with its status section; `None` when the cut was not an event boundary
    /// (push the shard's bytes instead). Give it the sections in order
    /// ([`KinetoReader::absorb_section`]), then [`KinetoReader::merge_incoming`].
    pub fn incoming(&self, start: u64, bare: bool, count: usize) -> Result<Option<IncomingShard>> {
        if !self.stopped_between_events(start, bare) {
            return Ok(None);
        }
        if count == 0 {
            return Err(bad("shard sections missing"));
        }
        Ok(Some(IncomingShard {
            start,
            count,
            decoder: None,
            reserve: 0,
            onto: None,
            cols: 0,
        }))
    }

    /// Takes `inc`'s next section; its slice columns are merged here as they come. After an error
    /// this reader holds the shard's strings and tracks but none of its slices: drop it (the load
    /// has failed), though finishing it would not panic.
    pub fn absorb_section(&mut self, inc: &mut IncomingShard, section: &[u8]) -> Result<()> {
        let Some(d) = &mut inc.decoder else {
            return inc.status(section);
        };
        let Some(onto) = &mut inc.onto else {
            d.push(section)?;
            if let Some(shard) = d.take_reader() {
                if shard.base < inc.start {
                    return Err(bad("a shard that ends before it starts"));
                }
                inc.onto = Some(Onto {
                    shard,
                    maps: None,
                    n: 0,
                });
            }
            return Ok(());
        };
        let (Sink::Direct(a), Sink::Direct(b)) = (&mut self.sink, &mut onto.shard.sink) else {
            return Err(bad("shard sections out of order"));
        };
        if inc.cols >= COLUMNS {
            return Err(bad("more shard sections than columns"));
        }
        let mut g = Get::new(section);
        let n = g.count()?;
        let maps = match &onto.maps {
            Some(m) if n == onto.n => m,
            Some(_) => return Err(bad("a shard whose indices do not fit together")),
            None => {
                // Its first column: every index but its slices' values is checked before any of
                // them is merged.
                check_rest(b, n)?;
                onto.n = n;
                onto.maps.insert(a.merge_maps(b))
            }
        };
        if inc.cols + 1 < COLUMNS {
            let merged =
                column(&mut a.staged, inc.cols, &mut g, n, maps, b).and_then(|()| g.done());
            if let Err(e) = merged {
                a.staged.truncate(maps.first as usize);
                inc.onto = None;
                return Err(e);
            }
            inc.cols += 1;
            return Ok(());
        }
        // The args, last: the rest of the merge copies their records.
        let mut args = Vec::new();
        let read = <(u32, u32)>::get_many(&mut g, n, &mut args).and_then(|()| g.done());
        let Some(mut onto) = inc.onto.take() else {
            return Err(bad("shard sections out of order"));
        };
        let Some(maps) = onto.maps.take() else {
            return Err(bad("shard sections out of order"));
        };
        if let Err(e) = read {
            if let Sink::Direct(a) = &mut self.sink {
                a.staged.truncate(maps.first as usize);
            }
            return Err(e);
        }
        inc.cols += 1;
        self.take_parse_state(&mut onto.shard);
        if let (Sink::Direct(a), Sink::Direct(b)) = (&mut self.sink, onto.shard.sink) {
            a.absorb_rest(b, &maps, args);
        }
        Ok(())
    }

    /// Ends the merge of a shard whose sections were all given to [`KinetoReader::absorb_section`].
    pub fn merge_incoming(&mut self, inc: IncomingShard) -> Result<()> {
        if inc.cols == COLUMNS {
            Ok(())
        } else {
            Err(bad("shard sections missing"))
        }
    }
}

/// Decodes staged column `c` (all but the args) of a shard of `n` slices from `g` onto `a`'s,
/// through `m`; `b` is the shard, whose tracks and strings its values must fall in.
fn column(
    a: &mut StagedSlices,
    c: usize,
    g: &mut Get<'_>,
    n: usize,
    m: &MergeMaps,
    b: &super::build::Builder,
) -> Result<()> {
    let (tracks, strings) = (b.trace.tracks.len() as u32, b.trace.strings.len() as u32);
    let s = |id: StrId| (id.0 < strings).then(|| m.s(id));
    let refused = || bad("a shard whose indices do not fit together");
    macro_rules! plain {
        ($c:ident) => {
            a.$c.extend_from_wire(g, n)
        };
    }
    macro_rules! mapped {
        ($c:ident, $f:expr) => {{
            let from = a.$c.len();
            a.$c.extend_from_wire(g, n)?;
            if a.$c.map_from(from, $f) {
                Ok(())
            } else {
                Err(refused())
            }
        }};
    }
    match c {
        0 => plain!(start),
        1 => plain!(dur),
        2 => mapped!(track, |x| (x < tracks).then(|| m.t(x))),
        3 => mapped!(name, s),
        4 => mapped!(cat, s),
        5 => plain!(kind),
        6 => plain!(external_id),
        7 => plain!(correlation),
        8 => plain!(rf_id),
        9 => mapped!(input_dims, s),
        10 => mapped!(input_types, s),
        _ => Err(refused()),
    }
}
