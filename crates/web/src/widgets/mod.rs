//! Pieces every view shares and no view owns: the virtualized table, bar charts, number and
//! duration formatting, the palette, canvas text fitting and theme colours, the slice-lane and
//! counter painters (`spans`) and shared canvas geometry. Widgets know no view; they may use
//! `platform` only (`tests/arch/imports.test.mjs`).

pub mod bars;
pub mod fmt;
pub mod geometry;
pub mod later;
pub mod memory_paint;
pub mod palette;
pub mod prose;
pub mod spans;
pub mod table;
pub mod text;
pub mod theme;
