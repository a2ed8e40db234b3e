//! The colour of every slice on the timeline, from the same classification the tables use: a
//! kernel is coloured by its finer category under the session's rules
//! ([`crate::analysis::kernels::fine_category_with`]), so a kernel the Kernels tab calls
//! `attention` is attention's colour on the timeline too, and a rule the user edits recolours both;
//! every other slice by its kind ([`SliceCat`]). A kernel no rule names (`other`) keeps the kernel
//! colour: grey would read as "not GPU work".
//!
//! Classified once per distinct kernel name (interned), not per slice: a rule edit on a trace with
//! millions of kernels re-reads only its few hundred names.

use crate::analysis::kernels::{fine_category_with, FineRule};
use crate::model::{SliceKind, Trace};
use crate::view::palette::{slot, SliceCat};

/// Marks a string that no kernel slice is named.
const NOT_A_KERNEL: u8 = u8::MAX;

/// Palette slots ([`crate::view::palette::slot`]) of the trace's kernel names under one set of
/// rules.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SliceColors {
    /// Per interned string: the slot of a kernel of that name, or [`NOT_A_KERNEL`].
    kernel_slot: Vec<u8>,
    /// The kernel categories met, with their slots, in palette order then by name (the legend).
    categories: Vec<(usize, String)>,
}

impl SliceColors {
    pub fn new(t: &Trace, rules: &[FineRule]) -> SliceColors {
        let mut kernel_slot = vec![NOT_A_KERNEL; t.strings.len()];
        let mut categories: Vec<(usize, String)> = Vec::new();
        let s = &t.slices;
        for i in 0..s.len() {
            if s.kind[i] != SliceKind::Kernel {
                continue;
            }
            let n = s.name[i].index();
            if kernel_slot.get(n) == Some(&NOT_A_KERNEL) {
                let cat = fine_category_with(rules, t.str(s.name[i]), SliceKind::Kernel);
                // A kernel no rule names is still GPU work: the kernel colour, not grey.
                let k = if cat == "other" {
                    SliceCat::Kernel.slot()
                } else {
                    slot(&cat)
                };
                // The palette has fewer than 255 entries (checked in the tests).
                kernel_slot[n] = u8::try_from(k).unwrap_or(NOT_A_KERNEL - 1);
                if !categories.iter().any(|(_, c)| *c == cat) {
                    categories.push((k, cat));
                }
            }
        }
        categories.sort_unstable();
        SliceColors {
            kernel_slot,
            categories,
        }
    }

    /// The palette slot of slice `i` of `t`.
    pub fn slot(&self, t: &Trace, i: usize) -> usize {
        let kind = t.slices.kind[i];
        if kind == SliceKind::Kernel {
            if let Some(&k) = self.kernel_slot.get(t.slices.name[i].index()) {
                if k != NOT_A_KERNEL {
                    return usize::from(k);
                }
            }
        }
        SliceCat::of(kind, false).slot()
    }

    /// The kernel categories of this trace under the rules, with their palette slots (the
    /// legend's kernel part).
    pub fn kernel_categories(&self) -> &[(usize, String)] {
        &self.categories
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::kernels::default_fine_rules;
    use crate::view::palette::{color, COLORS};
    use crate::view::testutil::trace_of;

    fn slot_of(t: &Trace, c: &SliceColors, name: &str) -> usize {
        let i = (0..t.slices.len())
            .find(|&i| t.str(t.slices.name[i]) == name)
            .unwrap_or_else(|| panic!("no slice {name}"));
        c.slot(t, i)
    }

    #[test]
    fn kernels_take_their_category_colour_and_a_rule_edit_recolours_them() {
        assert!(COLORS.len() < usize::from(NOT_A_KERNEL));
        let t = trace_of(&[
            ("aten::mm", "cpu_op", 1, 0.0, 10.0),
            ("ampere_sgemm_128x64_nn", "kernel", 7, 1.0, 2.0),
            (
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                "kernel",
                8,
                1.0,
                3.0,
            ),
            ("flash_fwd_kernel", "kernel", 7, 4.0, 1.0),
            ("my_custom_kernel", "kernel", 7, 6.0, 1.0),
            ("my_custom_kernel", "kernel", 7, 8.0, 1.0),
        ]);
        let slot_color = |s: usize| COLORS[s].1;
        let c = SliceColors::new(&t, &default_fine_rules());
        assert_eq!(slot_color(slot_of(&t, &c, "aten::mm")), color("cpu_op"));
        assert_eq!(
            slot_color(slot_of(&t, &c, "ampere_sgemm_128x64_nn")),
            color("gemm")
        );
        assert_eq!(
            slot_color(slot_of(&t, &c, "ncclDevKernel_AllReduce_Sum_f32_RING_LL")),
            color("comm")
        );
        assert_eq!(
            slot_color(slot_of(&t, &c, "flash_fwd_kernel")),
            color("attention")
        );
        assert_eq!(
            slot_color(slot_of(&t, &c, "my_custom_kernel")),
            color("kernel")
        );
        let names: Vec<&str> = c
            .kernel_categories()
            .iter()
            .map(|(_, n)| n.as_str())
            .collect();
        assert_eq!(names, ["gemm", "other", "attention", "comm"]);

        // The user files their kernel under attention: the timeline follows.
        let mut rules = default_fine_rules();
        rules.insert(
            0,
            FineRule {
                category: "attention".into(),
                contains: vec!["my_custom".into()],
            },
        );
        let c2 = SliceColors::new(&t, &rules);
        assert_eq!(
            slot_color(slot_of(&t, &c2, "my_custom_kernel")),
            color("attention")
        );
        let names: Vec<&str> = c2
            .kernel_categories()
            .iter()
            .map(|(_, n)| n.as_str())
            .collect();
        assert_eq!(names, ["gemm", "attention", "comm"]);
        // Names that are not kernels keep their kind's colour under any rules.
        assert_eq!(slot_of(&t, &c2, "aten::mm"), SliceCat::CpuOp.slot());
    }
}
