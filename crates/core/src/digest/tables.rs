//! The analysis's tables as columns and back: operators, kernels, steps and collective calls.
//! Column names are the struct fields' (ns, bytes), so a query reads like the code.

use super::Figures;
use crate::analysis::collectives::Call;
use crate::analysis::flops::FlopsSource;
use crate::analysis::kernels::{KernelRow, KernelTable};
use crate::analysis::ops::{OpRow, OpTable};
use crate::analysis::steps::{Step, CATEGORIES};
use crate::analysis::tensor_cores::TensorCores;
use crate::model::SliceKind;
use crate::parquet::{Column as C, Strings, Table, Values as V};
use crate::report::analysis::Analysis;

fn strs<'a>(it: impl Iterator<Item = &'a str>) -> V {
    V::Str(it.collect::<Strings>())
}

fn table(cols: Vec<C>) -> Table {
    // Every column is built from the same rows: lengths agree by construction.
    Table::new(cols).unwrap_or_default()
}

/// A nullable fraction as a `double` column: NaN stands for none (digests before the roofline
/// have no such column, which reads as none too).
fn opt_f64(it: impl Iterator<Item = Option<f64>>) -> V {
    V::F64(it.map(|x| x.unwrap_or(f64::NAN)).collect())
}

fn read_opt_f64<'a>(t: &'a Table, name: &str) -> impl Fn(usize) -> Option<f64> + 'a {
    let v = t.f64s(name).ok();
    move |k| v.and_then(|v| v.get(k).copied()).filter(|x| !x.is_nan())
}

fn flops_source(s: FlopsSource) -> &'static str {
    match s {
        FlopsSource::None => "none",
        FlopsSource::Trace => "trace",
        FlopsSource::Torch => "torch",
        FlopsSource::FlopCounter => "flop_counter",
    }
}

fn ops(t: &OpTable) -> Table {
    let r = &t.rows;
    let i = |f: fn(&OpRow) -> i64| V::I64(r.iter().map(f).collect());
    table(vec![
        C::new("name", strs(r.iter().map(|o| o.name.as_str()))),
        C::nullable_str("input_shapes", r.iter().map(|o| o.input_shapes.as_deref())),
        C::new(
            "on_device",
            V::Bool(r.iter().map(|o| o.on_device).collect()),
        ),
        C::new(
            "is_user_annotation",
            V::Bool(r.iter().map(|o| o.is_user_annotation).collect()),
        ),
        C::new("calls", i(|o| o.calls as i64)),
        C::new("self_cpu_ns", i(|o| o.self_cpu_ns)),
        C::new("cpu_total_ns", i(|o| o.cpu_total_ns)),
        C::new("self_device_ns", i(|o| o.self_device_ns)),
        C::new("device_total_ns", i(|o| o.device_total_ns)),
        C::new("self_cpu_mem_bytes", i(|o| o.self_cpu_mem_bytes)),
        C::new("cpu_mem_bytes", i(|o| o.cpu_mem_bytes)),
        C::new("self_device_mem_bytes", i(|o| o.self_device_mem_bytes)),
        C::new("device_mem_bytes", i(|o| o.device_mem_bytes)),
        C::new("flops", V::F64(r.iter().map(|o| o.flops).collect())),
        C::new(
            "flops_source",
            strs(r.iter().map(|o| flops_source(o.flops_source))),
        ),
        C::new("pct_of_roof", opt_f64(r.iter().map(|o| o.pct_of_roof))),
    ])
}

fn kernels(t: &KernelTable) -> Table {
    let r = &t.rows;
    let i = |f: fn(&KernelRow) -> i64| V::I64(r.iter().map(f).collect());
    table(vec![
        C::new("name", strs(r.iter().map(|k| k.name.as_str()))),
        C::new("kind", strs(r.iter().map(|k| k.kind.label()))),
        C::new("calls", i(|k| k.calls as i64)),
        C::new("total_ns", i(|k| k.total_ns)),
        C::new("avg_ns", V::F64(r.iter().map(|k| k.avg_ns).collect())),
        C::new("min_ns", i(|k| k.min_ns)),
        C::new("max_ns", i(|k| k.max_ns)),
        C::new(
            "pct_of_gpu",
            V::F64(r.iter().map(|k| k.pct_of_gpu).collect()),
        ),
        C::new("category", strs(r.iter().map(|k| k.category))),
        C::new(
            "fine_category",
            strs(r.iter().map(|k| k.fine_category.as_str())),
        ),
        C::nullable_str(
            "tensor_cores",
            r.iter().map(|k| k.tensor_cores.map(TensorCores::slug)),
        ),
        C::nullable_str("launching_op", r.iter().map(|k| k.launching_op.as_deref())),
        C::new("pct_of_roof", opt_f64(r.iter().map(|k| k.pct_of_roof))),
    ])
}

fn steps(s: &[Step]) -> Table {
    let mut cols = vec![
        C::new("name", strs(s.iter().map(|x| x.name.as_str()))),
        C::new("start_ns", V::I64(s.iter().map(|x| x.start_ns).collect())),
        C::new("dur_ns", V::I64(s.iter().map(|x| x.dur_ns).collect())),
    ];
    for (k, c) in CATEGORIES.iter().enumerate() {
        cols.push(C::new(
            &format!("{c}_ns"),
            V::I64(s.iter().map(|x| x.parts_ns[k]).collect()),
        ));
    }
    table(cols)
}

fn calls(c: &[Call]) -> Table {
    let o = |f: fn(&Call) -> Option<i64>| c.iter().map(f);
    table(vec![
        C::new("name", strs(c.iter().map(|x| x.name.as_str()))),
        C::new("slice_name", strs(c.iter().map(|x| x.slice_name.as_str()))),
        C::nullable_str("pg", c.iter().map(|x| x.pg.as_deref())),
        C::nullable_i64("seq", o(|x| x.seq)),
        C::new("start_ns", V::I64(c.iter().map(|x| x.start_ns).collect())),
        C::new("end_ns", V::I64(c.iter().map(|x| x.end_ns).collect())),
        C::nullable_i64("in_nelems", o(|x| x.in_nelems.map(|v| v as i64))),
        C::nullable_i64("out_nelems", o(|x| x.out_nelems.map(|v| v as i64))),
        C::nullable_str("dtype", c.iter().map(|x| x.dtype.as_deref())),
        C::nullable_i64("group_size", o(|x| x.group_size.map(i64::from))),
    ])
}

/// The four analysis tables, in [`super::TABLES`] order.
pub fn of(a: &Analysis) -> Vec<Table> {
    vec![
        ops(&a.ops),
        kernels(&a.kernels),
        steps(&a.steps),
        calls(&a.collectives),
    ]
}

pub fn figures(a: &Analysis) -> Figures {
    let owned = |v: &[(&'static str, i64)]| v.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect();
    Figures {
        self_cpu_total_ns: a.ops.self_cpu_total_ns,
        self_device_total_ns: a.ops.self_device_total_ns,
        kernels_total_ns: a.kernels.total_ns,
        categories: owned(&a.categories.seed),
        categories_literal: owned(&a.categories.seed_literal),
        fine_categories: a.categories.fine.clone(),
        gpu: a.gpu.clone(),
        temporal_hta: a.temporal_hta,
        memory: a.memory.clone(),
        memory_ops: a.memory_ops.clone(),
        launch: a.launch.clone(),
        sync: a.sync.clone(),
        flops: a.flops.clone(),
        roofline: crate::analysis::roofline::Roofline {
            // Per shape, per op name and per kernel are tables' worth of rows; a digest keeps
            // the device and the coverage here and each row's % of roof in its table.
            ops: Vec::new(),
            by_name: Vec::new(),
            kernels: Vec::new(),
            ..a.roofline.clone()
        },
        // The intervals are for stepping through a timeline; the totals stay.
        idle: crate::analysis::idle::IdleCauses {
            intervals: Vec::new(),
            ..a.idle.clone()
        },
        recommendations: a
            .recommendations
            .iter()
            .map(|r| crate::analysis::recommend::Recommendation {
                ranges: Vec::new(),
                ..r.clone()
            })
            .collect(),
        modules: a.modules.clone(),
        sources: a.sources.clone(),
        backward: a.backward.clone(),
        backward_unmatched: a.autograd.unmatched,
        graphs: a.graphs.clone(),
        health: a.health.clone(),
    }
}

/// The seed categories' names as the analysis holds them (`&'static`).
pub fn seed_name(s: &str) -> &'static str {
    ["matmul", "comm", "memory", "other"]
        .into_iter()
        .find(|k| *k == s)
        .unwrap_or("other")
}

pub fn read_ops(t: &Table, grouped: bool) -> Result<Vec<OpRow>, String> {
    let name = t.strs("name")?;
    let shapes = t.opt_str("input_shapes")?;
    let (dev, ua) = (t.bools("on_device")?, t.bools("is_user_annotation")?);
    let i = |c: &str| t.i64s(c);
    let (calls, sc, ct, sd, dt) = (
        i("calls")?,
        i("self_cpu_ns")?,
        i("cpu_total_ns")?,
        i("self_device_ns")?,
        i("device_total_ns")?,
    );
    let (scm, cm, sdm, dm) = (
        i("self_cpu_mem_bytes")?,
        i("cpu_mem_bytes")?,
        i("self_device_mem_bytes")?,
        i("device_mem_bytes")?,
    );
    let (flops, src) = (t.f64s("flops")?, t.strs("flops_source")?);
    let roof = read_opt_f64(t, "pct_of_roof");
    Ok((0..t.rows)
        .map(|k| OpRow {
            name: name.get(k).to_owned(),
            input_shapes: if grouped { shapes(k) } else { None },
            on_device: dev[k],
            is_user_annotation: ua[k],
            calls: calls[k] as u64,
            self_cpu_ns: sc[k],
            cpu_total_ns: ct[k],
            self_device_ns: sd[k],
            device_total_ns: dt[k],
            self_cpu_mem_bytes: scm[k],
            cpu_mem_bytes: cm[k],
            self_device_mem_bytes: sdm[k],
            device_mem_bytes: dm[k],
            flops: flops[k],
            flops_source: match src.get(k) {
                "trace" => FlopsSource::Trace,
                "torch" => FlopsSource::Torch,
                "flop_counter" => FlopsSource::FlopCounter,
                _ => FlopsSource::None,
            },
            pct_of_roof: roof(k),
        })
        .collect())
}

pub fn read_kernels(t: &Table) -> Result<Vec<KernelRow>, String> {
    let (name, kind, cat, fine) = (
        t.strs("name")?,
        t.strs("kind")?,
        t.strs("category")?,
        t.strs("fine_category")?,
    );
    let (calls, total, min, max) = (
        t.i64s("calls")?,
        t.i64s("total_ns")?,
        t.i64s("min_ns")?,
        t.i64s("max_ns")?,
    );
    let (avg, pct) = (t.f64s("avg_ns")?, t.f64s("pct_of_gpu")?);
    let (tc, op) = (t.opt_str("tensor_cores")?, t.opt_str("launching_op")?);
    let roof = read_opt_f64(t, "pct_of_roof");
    Ok((0..t.rows)
        .map(|k| KernelRow {
            name: name.get(k).to_owned(),
            kind: SliceKind::from_cat(kind.get(k)),
            calls: calls[k] as u64,
            total_ns: total[k],
            avg_ns: avg[k],
            min_ns: min[k],
            max_ns: max[k],
            pct_of_gpu: pct[k],
            category: seed_name(cat.get(k)),
            fine_category: fine.get(k).to_owned(),
            tensor_cores: tc(k).and_then(|s| match s.as_str() {
                "yes" => Some(TensorCores::Yes),
                "no_fp32_simt" => Some(TensorCores::NoFp32Simt),
                _ => None,
            }),
            grid: None,
            block: None,
            registers: None,
            occupancy_pct: None,
            launching_op: op(k),
            pct_of_roof: roof(k),
        })
        .collect())
}

pub fn read_steps(t: &Table) -> Result<Vec<Step>, String> {
    let name = t.strs("name")?;
    let (start, dur) = (t.i64s("start_ns")?, t.i64s("dur_ns")?);
    let parts: Vec<&[i64]> = CATEGORIES
        .iter()
        .map(|c| t.i64s(&format!("{c}_ns")))
        .collect::<Result<_, _>>()?;
    Ok((0..t.rows)
        .map(|k| Step {
            name: name.get(k).to_owned(),
            slice: crate::model::NONE,
            start_ns: start[k],
            dur_ns: dur[k],
            parts_ns: std::array::from_fn(|c| parts[c][k]),
        })
        .collect())
}

pub fn read_calls(t: &Table) -> Result<Vec<Call>, String> {
    let (name, sname) = (t.strs("name")?, t.strs("slice_name")?);
    let (pg, dtype) = (t.opt_str("pg")?, t.opt_str("dtype")?);
    let (seq, inn, out, gs) = (
        t.opt_i64("seq")?,
        t.opt_i64("in_nelems")?,
        t.opt_i64("out_nelems")?,
        t.opt_i64("group_size")?,
    );
    let (start, end) = (t.i64s("start_ns")?, t.i64s("end_ns")?);
    Ok((0..t.rows)
        .map(|k| Call {
            pg: pg(k),
            seq: seq(k),
            name: name.get(k).to_owned(),
            slice_name: sname.get(k).to_owned(),
            slice: crate::model::NONE,
            start_ns: start[k],
            end_ns: end[k],
            in_nelems: inn(k).map(|v| v as u64),
            out_nelems: out(k).map(|v| v as u64),
            dtype: dtype(k),
            group_size: gs(k).map(|v| v as u32),
        })
        .collect())
}
