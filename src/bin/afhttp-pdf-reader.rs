//! `afhttp-pdf-reader FILE MAX_PAGES AS_BYTES CPU_SECONDS`: the PDF reader the fetch runs as a
//! child process, under the limits it is given, printing one JSON report on stdout. Its own
//! executable so that the child carries the parser and nothing of the CLI (docs/design.md,
//! "The reader runs in a child process"). Not meant to be run by hand.

fn main() -> std::process::ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    std::process::ExitCode::from(afhttp::sdk::documents::pdf::reader::child_main(
        &args, &mut out,
    ))
}
