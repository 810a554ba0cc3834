//! End-to-end tests: the real plugin component driven through the host.
