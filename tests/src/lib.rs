//! End-to-end tests live in `end_to_end/`; this crate has no library code.
