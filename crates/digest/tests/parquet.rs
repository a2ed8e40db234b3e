//! Core's Parquet reader against the two writers that matter: the `parquet` crate as the digest
//! writer drives it (round trip of every type, nulls, several pages) and pyarrow (fixtures made
//! by `fixtures/make_pyarrow.py`, values recomputed here from the script's rules); what it must
//! refuse it refuses by name; cut or corrupted files are errors, never panics.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use tracelight_core::parquet::{read_table, Column, Strings, Table, Values};
use tracelight_core::ErrorKind;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/").to_owned() + name)
        .unwrap()
}

fn sample(n: usize) -> Table {
    Table::new(vec![
        Column::new("b", Values::Bool((0..n).map(|i| i % 3 == 0).collect())),
        Column::new("i", Values::I32((0..n).map(|i| i as i32 - 7).collect())),
        Column::new("l", Values::I64((0..n).map(|i| (i as i64) << 33).collect())),
        Column::new("d", Values::F64((0..n).map(|i| i as f64 / 3.0).collect())),
        Column::new(
            "s",
            Values::Str(
                (0..n)
                    .map(|i| format!("k{i}·"))
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str)
                    .collect::<Strings>(),
            ),
        ),
        Column::nullable_i64("oi", (0..n).map(|i| (i % 4 != 1).then_some(i as i64 * 5))),
        Column::nullable_str(
            "os",
            (0..n)
                .map(|i| (i % 6 != 2).then(|| format!("v{i}")))
                .collect::<Vec<_>>()
                .iter()
                .map(Option::as_deref),
        ),
    ])
    .unwrap()
}

#[test]
fn round_trip_through_the_parquet_crate_writer() {
    for n in [0, 1, 9, 200_000] {
        let t = sample(n);
        let bytes = tracelight_digest::table_bytes(&t).unwrap();
        let back = read_table("t.parquet", &bytes).unwrap();
        assert_eq!(back, t, "{n} rows");
    }
}

#[test]
fn reads_pyarrow_files_value_for_value() {
    for (file, n) in [
        ("pyarrow_gzip_v1.parquet", 1200),
        ("pyarrow_plain_v1.parquet", 300),
    ] {
        let t = read_table(file, &fixture(file)).unwrap();
        assert_eq!(t.rows, n, "{file}");
        let ids = t.i32s("id").unwrap();
        assert!(ids.iter().enumerate().all(|(i, &v)| v == i as i32));
        let big = t.i64s("big").unwrap();
        assert!(big
            .iter()
            .enumerate()
            .all(|(i, &v)| v == i as i64 * 1_000_000_007));
        let x = t.f64s("x").unwrap();
        assert!(x.iter().enumerate().all(|(i, &v)| v == i as f64 / 8.0));
        let flag = t.bools("flag").unwrap();
        assert!(flag.iter().enumerate().all(|(i, &v)| v == (i % 3 == 0)));
        let name = t.strs("name").unwrap();
        assert!((0..n).all(|i| name.get(i) == format!("row {i} é")));
        let maybe = t.opt_i64("maybe").unwrap();
        assert!((0..n).all(|i| maybe(i) == (i % 7 != 3).then_some(i as i64 * 2)));
        let label = t.opt_str("label").unwrap();
        assert!((0..n).all(|i| label(i) == (i % 5 != 1).then(|| format!("l{i}"))));
    }
}

#[test]
fn refuses_what_it_does_not_read_by_name() {
    for (file, what) in [
        ("pyarrow_dictionary.parquet", "dictionary"),
        ("pyarrow_v2.parquet", "data page v2"),
        ("pyarrow_snappy.parquet", "codec 1"),
    ] {
        let e = read_table(file, &fixture(file)).unwrap_err();
        assert_eq!(e.file.as_deref(), Some(file));
        match &e.kind {
            ErrorKind::Refused(m) => assert!(m.contains(what), "{file}: {m}"),
            k => panic!("{file}: {k:?}"),
        }
    }
    let e = read_table("x.json", b"{\"traceEvents\": []}").unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Incompatible(_)));
}

#[test]
fn cut_or_corrupted_files_are_errors_not_panics() {
    let good = tracelight_digest::table_bytes(&sample(40)).unwrap();
    for cut in 0..good.len() {
        let mut b = good[..cut].to_vec();
        // Keep the trailing magic so the reader goes past its first check.
        b.extend_from_slice(b"PAR1");
        let _ = read_table("cut.parquet", &b);
    }
    let mut seed = 0x9e37_79b9_u32;
    for _ in 0..3000 {
        let mut b = good.clone();
        for _ in 0..3 {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let k = seed as usize % b.len();
            b[k] ^= (seed >> 8) as u8 | 1;
        }
        if let Err(e) = read_table("flip.parquet", &b) {
            assert_eq!(e.file.as_deref(), Some("flip.parquet"));
        }
    }
}
