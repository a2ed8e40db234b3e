//! The Kineto `args` keys the model keeps in typed columns, listed once: the reader
//! matches them ([`bytes`], in `ingest/kineto/event.rs`), the builder decides which stay columnar
//! (`ingest/kineto/build.rs`), and [`crate::model::Trace::slice_args`] writes them back ([`text`]).
//! Older spellings (`external id`, `Input dims`, `Bytes`) are listed beside the current ones.

macro_rules! arg_keys {
    ($($(#[$doc:meta])* $name:ident = $key:literal;)*) => {
        /// The keys as text.
        pub mod text {
            $($(#[$doc])* pub const $name: &str = $key;)*
        }
        /// The keys as bytes, for matching raw JSON.
        pub mod bytes {
            $($(#[$doc])* pub const $name: &[u8] = $key.as_bytes();)*
        }
        /// Every key, in the order above.
        pub const ALL: &[&str] = &[$($key),*];
    };
}

arg_keys! {
    EXTERNAL_ID = "External id";
    /// Old traces' spelling.
    EXTERNAL_ID_LOWER = "external id";
    CORRELATION = "correlation";
    RECORD_FUNCTION_ID = "Record function id";
    INPUT_DIMS = "Input Dims";
    /// Old traces' spelling.
    INPUT_DIMS_LOWER = "Input dims";
    INPUT_TYPE = "Input type";
    FLOPS = "flops";
    DEVICE = "device";
    STREAM = "stream";
    GRID = "grid";
    BLOCK = "block";
    REGISTERS = "registers per thread";
    SHARED_MEMORY = "shared memory";
    BLOCKS_PER_SM = "blocks per SM";
    WARPS_PER_SM = "warps per SM";
    OCCUPANCY = "est. achieved occupancy %";
    BYTES = "bytes";
    /// Old traces' spelling.
    BYTES_UPPER = "Bytes";
    BANDWIDTH = "memory bandwidth (GB/s)";
    TOTAL_ALLOCATED = "Total Allocated";
    TOTAL_RESERVED = "Total Reserved";
    ADDR = "Addr";
    DEVICE_ID = "Device Id";
    DEVICE_TYPE = "Device Type";
    /// Metadata events: process / thread names.
    NAME = "name";
    SORT_INDEX = "sort_index";
    LABELS = "labels";
}
