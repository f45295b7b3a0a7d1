//! Fuzz target `wait_spec`: the body and its invariants live in `afhttp::fuzzing`, shared with
//! the stable replay test.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| afhttp::fuzzing::inputs::wait_spec(data));
