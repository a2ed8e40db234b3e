//! The device table: for each accelerator, the dense peak of each math unit per dtype and the
//! memory bandwidth, every number from the vendor's datasheet (cited per row in
//! [`Device::source`]). MFU ([`super::mfu`]), the roofline ([`super::roofline`]) and the
//! headline blend all read their peaks here, through [`super::math_unit`], which decides which
//! unit an op ran on.
//!
//! Conventions, the same for every row:
//! - **Dense** figures. NVIDIA's datasheets print tensor-core peaks "with sparsity" (marked `*`);
//!   the dense figure is half of it, and that half is what is stored here.
//! - **Matrix** = tensor cores (NVIDIA) / matrix cores (AMD); **vector** = the SIMT / vector ALUs
//!   (CUDA cores). `tf32` is fp32 inputs on the matrix unit (NVIDIA TF32, AMD MI300's XF32).
//! - Bandwidth is the datasheet's memory bandwidth in GB/s (10⁹ bytes per second).
//! - A figure the datasheet does not print is `None`; nothing is extrapolated from clocks.
//!
//! A device name that matches no row has no peak: the page asks the user for one and the CLI
//! says so; nothing is guessed.

use serde::Serialize;

/// Dense peak TFLOPS of the matrix (tensor-core) units per input dtype.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MatrixPeaks {
    pub fp64: Option<f64>,
    /// fp32 inputs on the matrix units (NVIDIA TF32, AMD XF32).
    pub tf32: Option<f64>,
    /// fp32 on AMD MI200 matrix cores (no TF32 there).
    pub fp32: Option<f64>,
    pub bf16: Option<f64>,
    pub fp16: Option<f64>,
    pub fp8: Option<f64>,
}

/// Dense peak TFLOPS of the vector (SIMT) units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VectorPeaks {
    pub fp64: Option<f64>,
    pub fp32: f64,
}

/// One accelerator of the table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Device {
    /// Short name shown to the user (`A100 SXM4 80GB`).
    pub name: &'static str,
    /// Every one of these must appear in the `deviceProperties` name (ASCII case-insensitive,
    /// as whole tokens: `L4` does not match `L40S`).
    #[serde(skip)]
    pub all: &'static [&'static str],
    /// None of these may appear.
    #[serde(skip)]
    pub none: &'static [&'static str],
    pub matrix: MatrixPeaks,
    pub vector: VectorPeaks,
    /// Memory bandwidth, GB/s.
    pub memory_gbs: f64,
    /// How many devices the runtime shows per datasheet part: 2 for MI250/MI250X, whose two
    /// GCDs are two devices to torch; every figure above is divided by it.
    pub dies: u8,
    /// Compute units per device the runtime reports (`numSms`), used only where the driver
    /// names the part generically (ROCm's "AMD Radeon Graphics").
    #[serde(skip)]
    pub cus: Option<i64>,
    /// The datasheet the numbers come from.
    pub source: &'static str,
}

const NO_MATRIX: MatrixPeaks = MatrixPeaks {
    fp64: None,
    tf32: None,
    fp32: None,
    bf16: None,
    fp16: None,
    fp8: None,
};

/// The table. Rows are tried in order; more specific names first (`H100 PCIe` before `H100`).
pub const DEVICES: &[Device] = &[
    Device {
        name: "V100 PCIe",
        all: &["V100", "PCIE"],
        none: &[],
        matrix: MatrixPeaks {
            fp16: Some(112.0),
            ..NO_MATRIX
        },
        vector: VectorPeaks {
            fp64: Some(7.0),
            fp32: 14.0,
        },
        memory_gbs: 900.0,
        dies: 1,
        cus: None,
        source: "NVIDIA Tesla V100 datasheet (2020), PCIe column",
    },
    Device {
        name: "V100 SXM2",
        all: &["V100"],
        none: &[],
        matrix: MatrixPeaks {
            fp16: Some(125.0),
            ..NO_MATRIX
        },
        vector: VectorPeaks {
            fp64: Some(7.8),
            fp32: 15.7,
        },
        memory_gbs: 900.0,
        dies: 1,
        cus: None,
        source: "NVIDIA Tesla V100 datasheet (2020), SXM2 column",
    },
    Device {
        name: "T4",
        all: &["T4"],
        none: &[],
        matrix: MatrixPeaks {
            fp16: Some(65.0),
            ..NO_MATRIX
        },
        vector: VectorPeaks {
            fp64: None,
            fp32: 8.1,
        },
        memory_gbs: 320.0,
        dies: 1,
        cus: None,
        source: "NVIDIA T4 datasheet (2019)",
    },
    Device {
        name: "A100 PCIe 80GB",
        all: &["A100", "80GB", "PCIE"],
        none: &[],
        matrix: A100_MATRIX,
        vector: A100_VECTOR,
        memory_gbs: 1935.0,
        dies: 1,
        cus: None,
        source: "NVIDIA A100 datasheet (2021), A100 80GB PCIe column",
    },
    Device {
        name: "A100 SXM4 80GB",
        all: &["A100", "80GB"],
        none: &[],
        matrix: A100_MATRIX,
        vector: A100_VECTOR,
        memory_gbs: 2039.0,
        dies: 1,
        cus: None,
        source: "NVIDIA A100 datasheet (2021), A100 80GB SXM column",
    },
    Device {
        name: "A100 40GB",
        all: &["A100"],
        none: &[],
        matrix: A100_MATRIX,
        vector: A100_VECTOR,
        memory_gbs: 1555.0,
        dies: 1,
        cus: None,
        source: "NVIDIA A100 datasheet (2021), A100 40GB PCIe and SXM columns",
    },
    Device {
        name: "A10",
        all: &["A10"],
        none: &[],
        matrix: MatrixPeaks {
            tf32: Some(62.5),
            bf16: Some(125.0),
            fp16: Some(125.0),
            ..NO_MATRIX
        },
        vector: VectorPeaks {
            fp64: None,
            fp32: 31.2,
        },
        memory_gbs: 600.0,
        dies: 1,
        cus: None,
        source: "NVIDIA A10 datasheet (2021)",
    },
    Device {
        name: "L4",
        all: &["L4"],
        none: &[],
        matrix: MatrixPeaks {
            tf32: Some(60.0),
            bf16: Some(121.0),
            fp16: Some(121.0),
            fp8: Some(242.5),
            ..NO_MATRIX
        },
        vector: VectorPeaks {
            fp64: None,
            fp32: 30.3,
        },
        memory_gbs: 300.0,
        dies: 1,
        cus: None,
        source: "NVIDIA L4 datasheet (2023)",
    },
    Device {
        name: "L40S",
        all: &["L40S"],
        none: &[],
        matrix: MatrixPeaks {
            tf32: Some(183.0),
            bf16: Some(362.05),
            fp16: Some(362.05),
            fp8: Some(733.0),
            ..NO_MATRIX
        },
        vector: VectorPeaks {
            fp64: None,
            fp32: 91.6,
        },
        memory_gbs: 864.0,
        dies: 1,
        cus: None,
        source: "NVIDIA L40S datasheet (2023)",
    },
    Device {
        name: "L40",
        all: &["L40"],
        none: &[],
        matrix: MatrixPeaks {
            tf32: Some(90.5),
            bf16: Some(181.0),
            fp16: Some(181.0),
            fp8: Some(362.0),
            ..NO_MATRIX
        },
        vector: VectorPeaks {
            fp64: None,
            fp32: 90.5,
        },
        memory_gbs: 864.0,
        dies: 1,
        cus: None,
        source: "NVIDIA L40 datasheet (2022)",
    },
    Device {
        name: "RTX 4090",
        all: &["RTX", "4090"],
        none: &[],
        matrix: MatrixPeaks {
            tf32: Some(82.6),
            bf16: Some(165.2),
            fp16: Some(165.2),
            fp8: Some(330.3),
            ..NO_MATRIX
        },
        vector: VectorPeaks {
            fp64: None,
            fp32: 82.6,
        },
        memory_gbs: 1008.0,
        dies: 1,
        cus: None,
        source: "NVIDIA Ada Lovelace architecture whitepaper v2.02, GeForce RTX 4090 column (FP32 accumulate)",
    },
    Device {
        name: "H100 PCIe",
        all: &["H100", "PCIE"],
        none: &[],
        matrix: MatrixPeaks {
            fp64: Some(51.0),
            tf32: Some(378.0),
            bf16: Some(756.5),
            fp16: Some(756.5),
            fp8: Some(1513.0),
            fp32: None,
        },
        vector: VectorPeaks {
            fp64: Some(26.0),
            fp32: 51.0,
        },
        memory_gbs: 2000.0,
        dies: 1,
        cus: None,
        source: "NVIDIA H100 datasheet (2023), H100 PCIe column",
    },
    Device {
        name: "H100 NVL",
        all: &["H100", "NVL"],
        none: &[],
        matrix: MatrixPeaks {
            fp64: Some(60.0),
            tf32: Some(417.5),
            bf16: Some(835.5),
            fp16: Some(835.5),
            fp8: Some(1670.5),
            fp32: None,
        },
        vector: VectorPeaks {
            fp64: Some(30.0),
            fp32: 60.0,
        },
        memory_gbs: 3900.0,
        dies: 1,
        cus: None,
        source: "NVIDIA H100 datasheet (2024), H100 NVL column",
    },
    Device {
        name: "H100 SXM",
        all: &["H100"],
        none: &[],
        matrix: H100_SXM_MATRIX,
        vector: H100_SXM_VECTOR,
        memory_gbs: 3350.0,
        dies: 1,
        cus: None,
        source: "NVIDIA H100 datasheet (2023), H100 SXM column",
    },
    Device {
        name: "H200 SXM",
        all: &["H200"],
        none: &[],
        matrix: H100_SXM_MATRIX,
        vector: H100_SXM_VECTOR,
        memory_gbs: 4800.0,
        dies: 1,
        cus: None,
        source: "NVIDIA H200 datasheet (2024), H200 SXM column",
    },
    Device {
        name: "B200",
        all: &["B200"],
        none: &[],
        matrix: MatrixPeaks {
            fp64: Some(37.0),
            tf32: Some(1125.0),
            bf16: Some(2250.0),
            fp16: Some(2250.0),
            fp8: Some(4500.0),
            fp32: None,
        },
        vector: VectorPeaks {
            fp64: Some(37.0),
            fp32: 75.0,
        },
        memory_gbs: 8000.0,
        dies: 1,
        cus: None,
        source: "NVIDIA HGX B200 datasheet (2024), per GPU (8-GPU figures ÷ 8)",
    },
    Device {
        name: "MI250X",
        all: &["MI250X"],
        none: &[],
        matrix: MatrixPeaks {
            fp64: Some(95.7),
            fp32: Some(95.7),
            bf16: Some(383.0),
            fp16: Some(383.0),
            ..NO_MATRIX
        },
        vector: VectorPeaks {
            fp64: Some(47.9),
            fp32: 47.9,
        },
        memory_gbs: 3276.8,
        dies: 2,
        cus: Some(110),
        source: "AMD Instinct MI250X datasheet (2021); torch sees each of its 2 GCDs as a device",
    },
    Device {
        name: "MI250",
        all: &["MI250"],
        none: &[],
        matrix: MatrixPeaks {
            fp64: Some(90.5),
            fp32: Some(90.5),
            bf16: Some(362.1),
            fp16: Some(362.1),
            ..NO_MATRIX
        },
        vector: VectorPeaks {
            fp64: Some(45.3),
            fp32: 45.3,
        },
        memory_gbs: 3276.8,
        dies: 2,
        cus: Some(104),
        source: "AMD Instinct MI250 datasheet (2021); torch sees each of its 2 GCDs as a device",
    },
    Device {
        name: "MI300X",
        all: &["MI300X"],
        none: &[],
        matrix: MatrixPeaks {
            fp64: Some(163.4),
            tf32: Some(653.7),
            fp32: Some(163.4),
            bf16: Some(1307.4),
            fp16: Some(1307.4),
            fp8: Some(2614.9),
        },
        vector: VectorPeaks {
            fp64: Some(81.7),
            fp32: 163.4,
        },
        memory_gbs: 5300.0,
        dies: 1,
        cus: Some(304),
        source: "AMD Instinct MI300X datasheet (2023)",
    },
];

const A100_MATRIX: MatrixPeaks = MatrixPeaks {
    fp64: Some(19.5),
    tf32: Some(156.0),
    bf16: Some(312.0),
    fp16: Some(312.0),
    fp8: None,
    fp32: None,
};
const A100_VECTOR: VectorPeaks = VectorPeaks {
    fp64: Some(9.7),
    fp32: 19.5,
};
const H100_SXM_MATRIX: MatrixPeaks = MatrixPeaks {
    fp64: Some(67.0),
    tf32: Some(494.5),
    bf16: Some(989.5),
    fp16: Some(989.5),
    fp8: Some(1979.0),
    fp32: None,
};
const H100_SXM_VECTOR: VectorPeaks = VectorPeaks {
    fp64: Some(34.0),
    fp32: 67.0,
};

/// Whether `token` appears in `name` as a whole token (case-insensitive; neighbours are not
/// ASCII letters or digits), so `L4` does not match `L40S` nor `A10` match `A100`.
fn has_token(name: &str, token: &str) -> bool {
    let (n, t) = (name.to_ascii_uppercase(), token.to_ascii_uppercase());
    n.match_indices(&t).any(|(at, m)| {
        let before = n[..at].chars().next_back();
        let after = n[at + m.len()..].chars().next();
        // A trailing `GB` after a size (`80GB`) or a `-SXM4` suffix is still a token boundary.
        let ok = |c: Option<char>| !matches!(c, Some(c) if c.is_ascii_alphanumeric());
        ok(before) && ok(after)
    })
}

/// The table row of a `deviceProperties` name, `None` when no row matches.
pub fn device_for(name: &str) -> Option<&'static Device> {
    DEVICES.iter().find(|d| {
        d.all.iter().all(|t| has_token(name, t)) && !d.none.iter().any(|t| has_token(name, t))
    })
}

/// The row of a trace's device: by name, then for the A100 by memory size (`A100-PG509-200`
/// names no size; more than 60 GB is an 80GB part), then for a generic AMD name by its compute
/// units per device.
pub fn device_of(props: &crate::model::DeviceProps) -> Option<&'static Device> {
    const GB60: u64 = 60_000_000_000;
    match device_for(&props.name) {
        Some(d) if d.name == "A100 40GB" && props.total_global_mem > GB60 => {
            device_named(if has_token(&props.name, "PCIE") {
                "A100 PCIe 80GB"
            } else {
                "A100 SXM4 80GB"
            })
        }
        Some(d) => Some(d),
        None if props.name.starts_with("AMD") => DEVICES
            .iter()
            .find(|d| d.cus.is_some_and(|c| c == props.num_sms)),
        None => None,
    }
}

impl Device {
    /// Memory bandwidth of one device the runtime shows, GB/s.
    pub fn bandwidth_gbs(&self) -> f64 {
        self.memory_gbs / f64::from(self.dies.max(1))
    }

    /// A datasheet figure for one device the runtime shows.
    pub fn per_device(&self, tflops: f64) -> f64 {
        tflops / f64::from(self.dies.max(1))
    }
}

/// A row by its short name ([`Device::name`]), for a user's explicit choice.
pub fn device_named(name: &str) -> Option<&'static Device> {
    DEVICES.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_drivers_report_them_pick_the_right_row() {
        let row = |n: &str| device_for(n).map(|d| d.name);
        assert_eq!(row("NVIDIA A100-SXM4-80GB"), Some("A100 SXM4 80GB"));
        assert_eq!(row("NVIDIA A100-SXM4-40GB"), Some("A100 40GB"));
        assert_eq!(row("NVIDIA A100-PCIE-40GB"), Some("A100 40GB"));
        assert_eq!(row("NVIDIA A100 80GB PCIe"), Some("A100 PCIe 80GB"));
        assert_eq!(row("NVIDIA H100 80GB HBM3"), Some("H100 SXM"));
        assert_eq!(row("NVIDIA H100 PCIe"), Some("H100 PCIe"));
        assert_eq!(row("NVIDIA H100 NVL"), Some("H100 NVL"));
        assert_eq!(row("NVIDIA H200"), Some("H200 SXM"));
        assert_eq!(row("Tesla V100-SXM2-32GB"), Some("V100 SXM2"));
        assert_eq!(row("Tesla V100-PCIE-16GB"), Some("V100 PCIe"));
        assert_eq!(row("Tesla T4"), Some("T4"));
        assert_eq!(row("NVIDIA A10"), Some("A10"));
        assert_eq!(row("NVIDIA A10G"), None);
        assert_eq!(row("NVIDIA L4"), Some("L4"));
        assert_eq!(row("NVIDIA L40S"), Some("L40S"));
        assert_eq!(row("NVIDIA L40"), Some("L40"));
        assert_eq!(row("NVIDIA GeForce RTX 4090"), Some("RTX 4090"));
        assert_eq!(row("AMD Instinct MI250X"), Some("MI250X"));
        assert_eq!(row("AMD Instinct MI250X / MI250"), Some("MI250X"));
        assert_eq!(row("AMD Instinct MI250"), Some("MI250"));
        assert_eq!(row("AMD Instinct MI300X"), Some("MI300X"));
        assert_eq!(row("NVIDIA GeForce RTX 2080 Ti"), None);
        assert_eq!(device_named("h100 sxm").map(|d| d.memory_gbs), Some(3350.0));
    }

    /// `docs/definitions.md` prints this table; every row there must say what the code holds.
    #[test]
    fn the_docs_table_is_the_code_table() {
        let doc = include_str!("../../../../docs/definitions.md");
        let num = |cell: &str| -> Option<f64> {
            let c = cell.trim();
            if c.starts_with('–') {
                return None;
            }
            c.split_whitespace().next()?.parse().ok()
        };
        for d in DEVICES {
            let Some(line) = doc.lines().find(|l| {
                l.strip_prefix("| ")
                    .and_then(|r| r.split(" |").next())
                    .is_some_and(|n| n == d.name || n == format!("{} (per GCD)", d.name))
            }) else {
                panic!("{} is not in docs/definitions.md", d.name)
            };
            let cells: Vec<&str> = line.split('|').skip(2).collect();
            let per = |x: Option<f64>| x.map(|v| d.per_device(v));
            let want = [
                per(d.matrix.fp64),
                per(d.matrix.tf32),
                per(d.matrix.bf16),
                per(d.matrix.fp16),
                per(d.matrix.fp8),
                per(d.vector.fp64),
                Some(d.per_device(d.vector.fp32)),
                Some(d.bandwidth_gbs()),
            ];
            for (k, w) in want.iter().enumerate() {
                let got = num(cells[k]);
                assert!(
                    match (got, w) {
                        (Some(a), Some(b)) => (a - b).abs() < 1e-6,
                        (None, None) => true,
                        _ => false,
                    },
                    "{} column {k}: docs {got:?}, code {w:?}",
                    d.name
                );
            }
            let src = d.source.split([',', ';']).next().unwrap_or("");
            assert!(cells[8].contains(src), "{}: {src}", d.name);
        }
    }

    /// Every row is complete enough for a roofline: a positive vector fp32 peak and bandwidth,
    /// and a source.
    #[test]
    fn every_row_has_a_roof_and_a_source() {
        for d in DEVICES {
            assert!(d.vector.fp32 > 0.0 && d.memory_gbs > 0.0, "{}", d.name);
            assert!(d.source.contains("datasheet") || d.source.contains("whitepaper"));
        }
    }
}
