//! Fuzz target `pdf_text`: the body and its invariants live in `afhttp::fuzzing`, shared with
//! the stable replay test.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| afhttp::fuzzing::pdf::pdf_text(data));
