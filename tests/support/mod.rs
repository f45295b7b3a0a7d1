//! Test support: the command wrapper, fixtures and fixture servers (filled in by the test-support work).
#![allow(dead_code)]
