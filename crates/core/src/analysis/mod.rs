//! Pure analyses over loaded files: small serializable structs for the views, the CLI and reports.

pub mod snapshot;
