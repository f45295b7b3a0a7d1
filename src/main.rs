//! The `afhttp` binary: everything happens in [`afhttp::cli`].

fn main() -> std::process::ExitCode {
    afhttp::cli::main()
}
