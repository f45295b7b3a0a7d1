//! Link flags for afhttp's executables (not the library): on Linux with glibc, relative
//! relocations are packed (`DT_RELR`, glibc 2.36+). A position-independent executable
//! otherwise carries one 24-byte `Rela` entry per pointer in its read-only data (1.1 MB in
//! `afhttp`, 0.55 MB in `afhttp-pdf-reader`) which the loader reads at every start, so each
//! process paid that much resident memory before doing anything; packed, the table is a few
//! KiB. Measured in docs/design.md ("Memory of a PDF fetch, by cause").
#![allow(clippy::print_stdout)]

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
