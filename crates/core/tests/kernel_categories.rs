//! Seed kernel categories: headline figures test comm before matmul (docs/definitions.md), so NCCL
//! kernels whose signature holds `ncclDevComm*` are comm, not matmul through the bare `mm`.
//! Regression for issue 18: the A100 rank-0-of-16 Overview said matmul 79 %, comm 0 %, while the
//! finer classification right below said comm 42 %.

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::kernels::{categories, kernel_table};
use tracelight_core::ingest::{load_bytes, Loaded};

/// The corpus folder (`tracelight_testkit::root()`, overridable by `TRACELIGHT_CORPUS`).
fn real() -> String {
    tracelight_testkit::root()
        .join("real")
        .to_string_lossy()
        .into_owned()
}

fn seed(c: &[(&'static str, i64)], k: &str) -> i64 {
    c.iter().find(|x| x.0 == k).unwrap().1
}

/// A hand-built trace: one NCCL kernel (10 µs, `ncclDevComm*` in its signature), one cuBLAS gemm
/// (4 µs), one memcpy (2 µs), one elementwise kernel (1 µs). By construction the headline is
/// comm 10, matmul 4, memory 2, other 1; the literal KempnerForge order puts the NCCL kernel
/// under matmul (14).
#[test]
fn nccl_dev_comm_kernels_are_comm_not_matmul_in_headline_categories() {
    let trace = r#"{"traceEvents":[
 {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)","pid":0,"tid":7,"ts":100,"dur":10,"args":{"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":8,"ts":100,"dur":4,"args":{"stream":8,"device":0}},
 {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":8,"ts":120,"dur":2,"args":{"stream":8,"device":0}},
 {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4>","pid":0,"tid":8,"ts":130,"dur":1,"args":{"stream":8,"device":0}}
]}"#;
    let Ok(Loaded::Trace(t)) = load_bytes("hand.json", trace.as_bytes()) else {
        panic!("hand-built trace must load")
    };
    let c = categories(&kernel_table(&t));
    let want = [
        ("comm", 10_000),
        ("matmul", 4_000),
        ("memory", 2_000),
        ("other", 1_000),
    ];
    for (k, ns) in want {
        assert_eq!(seed(&c.seed, k), ns, "{k}");
    }
    assert_eq!(seed(&c.seed_literal, "matmul"), 14_000);
    assert_eq!(seed(&c.seed_literal, "comm"), 0);
    // The two classifications beside each other now agree on comm.
    let fine_comm = c.fine.iter().find(|x| x.0 == "comm").unwrap().1;
    assert_eq!(fine_comm, seed(&c.seed, "comm"));
}

/// The A100 rank-0-of-16 trace: its 80 `ncclKernel_SendRecv_…(ncclDevComm*, …)` kernels last
/// 190 345 µs in all (summed with Python's json module over the `kernel` events whose name
/// contains "nccl"); that is the seed comm figure, and the literal order puts it under matmul.
#[test]
fn a100_rank0_nccl_time_is_seed_comm() {
    let path = format!("{}/hta/a100_80gb_rank0of16.json.gz", real());
    let Some(bytes) = tracelight_testkit::read(&path) else {
        return;
    };
    let Ok(Loaded::Trace(t)) = load_bytes(&path, &bytes) else {
        panic!("{path} must load as a trace")
    };
    let k = kernel_table(&t);
    let c = categories(&k);
    assert_eq!(seed(&c.seed, "comm"), 190_345_000);
    let fine_comm = c.fine.iter().find(|x| x.0 == "comm").unwrap().1;
    assert_eq!(fine_comm, 190_345_000);
    assert_eq!(
        seed(&c.seed_literal, "matmul") - seed(&c.seed, "matmul"),
        190_345_000
    );
    assert_eq!(seed(&c.seed_literal, "comm"), 0);
    assert!(k
        .rows
        .iter()
        .filter(|r| r.name.contains("ncclKernel"))
        .all(|r| r.category == "comm"));
}
