//! The timeline's parts a reader worker computes and hands to the page in sections
//! (`view::parts`) read back as exactly what the page would compute itself
//! (`TimelineParts::of` on the same model) on the GPU fixtures and every Kineto trace of the
//! corpus, columns longer than a piece included; damaged sections give an error, never a panic.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use tracelight_core::ingest::kineto::read_kineto;
use tracelight_core::model::wire::PIECE;
use tracelight_core::view::counters::{BusySeries, CounterTrack, SeriesData, StepSeries, Unit};
use tracelight_core::view::layout::Group;
use tracelight_core::view::parts::{sections, Decoder, TimelineParts};
use tracelight_core::view::steps::StepMark;

fn round_trip(p: &TimelineParts) -> TimelineParts {
    let mut d = Decoder::default();
    for s in sections(p) {
        d.push(&s).unwrap();
    }
    d.finish().unwrap()
}

#[test]
fn every_trace_reads_back_the_same_parts() {
    let (files, fixture_count) = common::fixtures_and_corpus("timeline parts corpus");
    let (mut traces, mut busy, mut memory, mut steps) = (0, 0, 0, 0);
    for (name, bytes) in files {
        let keep = if cfg!(debug_assertions) {
            3 << 20
        } else {
            usize::MAX
        };
        let Ok(t) = read_kineto(&bytes[..bytes.len().min(keep)]) else {
            continue;
        };
        let p = TimelineParts::of(&t);
        let back = round_trip(&p);
        assert_eq!(back, p, "{name}");
        assert!(back.fits(&t), "{name}");
        traces += 1;
        busy += usize::from(
            p.counters
                .iter()
                .any(|c| matches!(&c.data, SeriesData::Busy(b) if b.intervals().len() > 10)),
        );
        memory += usize::from(p.counters.iter().any(|c| c.unit == Unit::Bytes));
        steps += usize::from(p.steps.len() > 1);
    }
    assert!(traces >= fixture_count + 20, "{traces} traces checked");
    assert!(
        busy >= 5 && memory >= 3 && steps >= 5,
        "{busy} with utilization, {memory} with memory, {steps} with steps"
    );
}

/// Parts built by hand, each column longer than a piece (a step series of 2·PIECE + 7 samples, a
/// busy series of PIECE + 3 intervals, PIECE + 1 step marks) and empty ones beside them.
fn long_parts() -> TimelineParts {
    let n = 2 * PIECE + 7;
    let ts: Vec<i64> = (0..n as i64).map(|i| i * 3).collect();
    let value: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 * 0.5).collect();
    let iv: Vec<(i64, i64)> = (0..PIECE as i64 + 3)
        .map(|i| (i * 10, i * 10 + 4))
        .collect();
    let steps = (0..PIECE as i64 + 1)
        .map(|i| StepMark {
            start: i * 100,
            end: i * 100 + 90,
            label: format!("#{}", i + 5),
            slice: i as u32,
            number: i + 5,
        })
        .collect();
    TimelineParts {
        counters: vec![
            CounterTrack {
                label: "Memory allocated (GPU 0)".into(),
                unit: Unit::Bytes,
                max: 499.5,
                data: SeriesData::Step(StepSeries::new(ts, value)),
            },
            CounterTrack {
                label: "GPU 0 utilization".into(),
                unit: Unit::Fraction,
                max: 1.0,
                data: SeriesData::Busy(BusySeries::from_union(iv)),
            },
            CounterTrack {
                label: "empty".into(),
                unit: Unit::Plain,
                max: 0.0,
                data: SeriesData::Step(StepSeries::new(Vec::new(), Vec::new())),
            },
            CounterTrack {
                label: "idle GPU".into(),
                unit: Unit::Fraction,
                max: 1.0,
                data: SeriesData::Busy(BusySeries::from_union(Vec::new())),
            },
        ],
        groups: vec![Group {
            label: "GPU 0".into(),
            tracks: vec![0, 2],
            idle: vec![1],
            counters: vec![1, 3],
        }],
        steps,
        annotations: vec![("forward".into(), 3, 1_000), ("ünïcode".into(), 1, -5)],
        bounds: (-7, 1 << 40),
    }
}

#[test]
fn columns_longer_than_a_piece_read_back_whole() {
    let p = long_parts();
    let s = sections(&p);
    // The head, 2 + 1 + 1 + 1 pieces for the step series, 2 + 2 for the busy one, 1 + 1 for the
    // empty ones' columns each, 2 for each of the marks' four columns.
    assert_eq!(s.len(), 1 + 6 + 4 + 2 + 2 + 8);
    assert_eq!(round_trip(&p), p);
    // A section missing at the end is an error at `finish`.
    let mut d = Decoder::default();
    for x in &s[..s.len() - 1] {
        d.push(x).unwrap();
    }
    assert!(d.finish().is_err());
}

#[test]
fn parts_that_name_what_the_trace_lacks_do_not_fit() {
    let t = read_kineto(
        br#"{"traceEvents":[{"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":5}]}"#,
    )
    .unwrap();
    let p = TimelineParts::of(&t);
    assert!(p.fits(&t));
    assert_eq!(p.steps.len(), 1);
    let mut q = p.clone();
    q.groups[0].tracks.push(t.tracks.len());
    assert!(!q.fits(&t));
    let mut q = p.clone();
    q.groups[0].counters.push(0);
    assert!(!q.fits(&t));
    let mut q = p;
    q.steps[0].slice = t.slices.len() as u32;
    assert!(!q.fits(&t));
}

/// The sections of long parts, each flipped, cut, dropped or swapped: the decoder gives parts or
/// an error, never a panic; most are errors.
#[test]
fn damaged_sections_are_errors_not_panics() {
    let mut p = long_parts();
    // Shorter columns, so that flips land in the head and the column lengths often.
    if let SeriesData::Step(s) = &mut p.counters[0].data {
        *s = StepSeries::new(vec![1, 2, 3, 4], vec![1.0, 2.0, 0.5, 3.0]);
    }
    p.counters[1].data = SeriesData::Busy(BusySeries::from_union(vec![(0, 3), (5, 9), (12, 13)]));
    p.steps.truncate(3);
    let good = sections(&p);
    let mut errors = 0;
    for s in tracelight_testkit::damaged(&good, 800, 11) {
        let mut d = Decoder::default();
        let r = s
            .iter()
            .try_for_each(|x| d.push(x))
            .and_then(|()| d.finish());
        errors += usize::from(r.is_err());
    }
    assert!(errors > 400, "{errors} of 800 damaged parts were errors");
}

/// The bounds taken in parts (`Trace::slice_bounds`, as the page takes a big trace's), joined, are
/// the whole trace's: the slices' earliest start and latest end (a long slice that starts early
/// ends last) and the instants' and counters' times.
#[test]
fn bounds_taken_in_parts_join_to_the_whole() {
    use tracelight_core::model::Trace;
    let t = read_kineto(
        br#"{"traceEvents":[
            {"ph":"X","name":"a","pid":1,"tid":1,"ts":10,"dur":100},
            {"ph":"X","name":"b","pid":1,"tid":1,"ts":20,"dur":5},
            {"ph":"X","name":"c","pid":1,"tid":2,"ts":30,"dur":1},
            {"ph":"i","name":"i","pid":1,"tid":1,"ts":5},
            {"ph":"C","name":"q","pid":1,"ts":200,"args":{"v":1}}]}"#,
    )
    .unwrap();
    assert_eq!(t.slices.len(), 3);
    assert_eq!(t.point_bounds(), Some((5_000, 200_000)));
    assert_eq!(t.slice_bounds(0..3), Some((10_000, 110_000)));
    assert_eq!(t.time_bounds(), Some((5_000, 200_000)));
    for cut in 0..=3 {
        let parts = Trace::bounds_with(t.slice_bounds(0..cut), t.slice_bounds(cut..9));
        assert_eq!(parts, Some((10_000, 110_000)), "cut {cut}");
    }
    assert_eq!(t.slice_bounds(3..3), None);
    assert_eq!(Trace::bounds_with(None, None), None);
}
