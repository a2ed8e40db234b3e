//! The documented dense-peak table (DESIGN §4): TFLOPS per dtype for each accelerator, from the
//! vendors' datasheets (SXM/OAM parts, dense, no sparsity), and the dtype classes MFU uses.
//!
//! Sources: NVIDIA V100, A100, H100, H200, B200 (HGX B200 per-GPU), L4 and A10 datasheets; AMD
//! Instinct MI250X and MI300X datasheets. "tf32" is fp32 inputs on tensor cores (NVIDIA TF32;
//! AMD's MI300X XF32); a part without such a unit falls back to its fp32 peak.

use serde::Serialize;

/// Dense peak TFLOPS of one accelerator, per dtype (vendor datasheets, SXM/OAM parts, no
/// sparsity). `None` where the part has no such unit.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Peak {
    /// Substring of the `deviceProperties` name that selects this row (checked in table order).
    pub matches: &'static str,
    pub fp64: f64,
    pub fp32: f64,
    pub tf32: Option<f64>,
    pub bf16: Option<f64>,
    pub fp16: f64,
    pub fp8: Option<f64>,
}

/// The documented dense-peak table. Order matters: longer names first (`A100` before `A10`,
/// `H100 PCIe` before `H100`).
pub const PEAKS: &[Peak] = &[
    Peak {
        matches: "V100",
        fp64: 7.8,
        fp32: 15.7,
        tf32: None,
        bf16: None,
        fp16: 125.0,
        fp8: None,
    },
    Peak {
        matches: "A100",
        fp64: 19.5,
        fp32: 19.5,
        tf32: Some(156.0),
        bf16: Some(312.0),
        fp16: 312.0,
        fp8: None,
    },
    Peak {
        matches: "H100 PCIe",
        fp64: 51.0,
        fp32: 51.0,
        tf32: Some(378.0),
        bf16: Some(756.0),
        fp16: 756.0,
        fp8: Some(1513.0),
    },
    Peak {
        matches: "H100",
        fp64: 67.0,
        fp32: 67.0,
        tf32: Some(494.7),
        bf16: Some(989.4),
        fp16: 989.4,
        fp8: Some(1978.9),
    },
    Peak {
        matches: "H200",
        fp64: 67.0,
        fp32: 67.0,
        tf32: Some(494.7),
        bf16: Some(989.4),
        fp16: 989.4,
        fp8: Some(1978.9),
    },
    Peak {
        matches: "B200",
        fp64: 40.0,
        fp32: 80.0,
        tf32: Some(1100.0),
        bf16: Some(2250.0),
        fp16: 2250.0,
        fp8: Some(4500.0),
    },
    Peak {
        matches: "L4",
        fp64: 0.49,
        fp32: 30.3,
        tf32: Some(60.0),
        bf16: Some(121.0),
        fp16: 121.0,
        fp8: Some(242.0),
    },
    Peak {
        matches: "A10",
        fp64: 0.98,
        fp32: 31.2,
        tf32: Some(62.5),
        bf16: Some(125.0),
        fp16: 125.0,
        fp8: None,
    },
    Peak {
        matches: "MI250X",
        fp64: 95.7,
        fp32: 95.7,
        tf32: None,
        bf16: Some(383.0),
        fp16: 383.0,
        fp8: None,
    },
    Peak {
        matches: "MI300X",
        fp64: 163.4,
        fp32: 163.4,
        tf32: Some(653.7),
        bf16: Some(1307.4),
        fp16: 1307.4,
        fp8: Some(2614.9),
    },
];

/// The peak row for a device name. `L4` must not catch `L40`, `A10` must not catch `A100`/`A10G`.
pub fn peak_for(device: &str) -> Option<&'static Peak> {
    PEAKS.iter().find(|p| {
        device.match_indices(p.matches).any(|(at, m)| {
            let next = device[at + m.len()..].chars().next();
            !matches!(next, Some(c) if c.is_ascii_alphanumeric())
        })
    })
}

/// A dtype class from torch's `Input type` text (`["float", "double", "float"]`): the first
/// tensor input decides; a `double` after it is a Python scalar operand (`x * 0.5`), not fp64
/// math. Text that is not a list is read whole.
pub fn dtype_of(input_type: &str) -> &'static str {
    let first = input_type
        .split('"')
        .skip(1)
        .step_by(2)
        .find(|x| !x.is_empty() && !x.starts_with("Scalar"))
        .unwrap_or(input_type);
    if first.contains("BFloat16") {
        "bf16"
    } else if first.contains("Half") {
        "fp16"
    } else if first.contains("Float8") {
        "fp8"
    } else if first.contains("double") {
        "fp64"
    } else {
        "fp32"
    }
}

impl Peak {
    /// The dense peak for a dtype class; `tf32` falls back to fp32 on parts without TF32
    /// (V100, MI250X), `bf16` to fp32 on parts without bf16 units.
    pub fn tflops(&self, dtype: &str) -> Option<f64> {
        match dtype {
            "bf16" => self.bf16.or(Some(self.fp32)),
            "fp16" => Some(self.fp16),
            "fp8" => self.fp8,
            "fp64" => Some(self.fp64),
            "tf32" => self.tf32.or(Some(self.fp32)),
            _ => Some(self.fp32),
        }
    }

    /// Whether the peak used for `dtype` is a tensor-core (matrix unit) one.
    pub fn tensor_cores(&self, dtype: &str) -> bool {
        match dtype {
            "bf16" => self.bf16.is_some(),
            "fp16" => self.fp16 > self.fp32,
            "fp8" => self.fp8.is_some(),
            "tf32" => self.tf32.is_some(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peaks_pick_the_right_part() {
        assert_eq!(
            peak_for("NVIDIA A100-SXM4-80GB").map(|p| p.matches),
            Some("A100")
        );
        assert_eq!(peak_for("NVIDIA A10").map(|p| p.matches), Some("A10"));
        assert_eq!(peak_for("NVIDIA A10G").map(|p| p.matches), None);
        assert_eq!(peak_for("NVIDIA L40S").map(|p| p.matches), None);
        assert_eq!(peak_for("NVIDIA L4").map(|p| p.matches), Some("L4"));
        assert_eq!(
            peak_for("NVIDIA H100 80GB HBM3").map(|p| p.matches),
            Some("H100")
        );
        assert_eq!(
            peak_for("NVIDIA H100 PCIe").map(|p| p.matches),
            Some("H100 PCIe")
        );
        assert_eq!(
            peak_for("Tesla V100-SXM2-32GB").map(|p| p.matches),
            Some("V100")
        );
        assert_eq!(
            peak_for("AMD Instinct MI300X").map(|p| p.matches),
            Some("MI300X")
        );
    }

    #[test]
    fn the_first_tensor_input_decides_the_dtype() {
        assert_eq!(dtype_of("[\"float\", \"double\", \"float\"]"), "fp32");
        assert_eq!(
            dtype_of("[\"\", \"c10::BFloat16\", \"c10::BFloat16\"]"),
            "bf16"
        );
        assert_eq!(dtype_of("[\"Scalar\", \"c10::Half\"]"), "fp16");
        assert_eq!(dtype_of("[\"double\", \"double\"]"), "fp64");
        assert_eq!(dtype_of("c10::BFloat16"), "bf16");
    }

    #[test]
    fn tf32_uses_tensor_cores_where_the_part_has_them() {
        let Some(a100) = peak_for("NVIDIA A100-SXM4-80GB") else {
            panic!("A100 is in the table")
        };
        assert_eq!(a100.tflops("tf32"), Some(156.0));
        assert!(a100.tensor_cores("tf32"));
        assert!(!a100.tensor_cores("fp32"));
        let Some(v100) = peak_for("Tesla V100-SXM2-32GB") else {
            panic!("V100 is in the table")
        };
        assert_eq!(v100.tflops("tf32"), Some(15.7));
        assert!(!v100.tensor_cores("tf32"));
        assert!(v100.tensor_cores("fp16"));
    }
}
