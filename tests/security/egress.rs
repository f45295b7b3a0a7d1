//! The host browser's egress policy.
