//! The end-to-end tests enable the feature `test-support` to use them;
//! written once here, the two suites test against the same fakes.
//!
//! - [`http`](crate::test_support::http): a loopback HTTP server with canned
//!   replies, for remote indexes.
//! - [`providers`](crate::test_support::providers): skill providers scripted
//!   for tests (a fake one, and one whose calls wait at a gate), and the
//!   candidates they list.
//!
//! Not part of the host's API: compiled only for tests and with
//! `test-support`, and free to change with the tests that use it.

pub mod http;
pub mod providers;
