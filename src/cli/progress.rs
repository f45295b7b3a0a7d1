//! Progress of long container work on stderr: a progress bar when stderr is a terminal,
//! plain lines otherwise (logs, CI, an agent reading stderr). stdout keeps its one event.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::container::Reporter;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One line per event.
    Plain,
    /// A redrawn bar for stepped work; other lines as plain lines.
    Bar,
}

/// The mode for a stderr that is (or is not) a terminal of type `term` (`$TERM`): a bar
/// only on a terminal that can redraw a line.
pub fn mode(stderr_is_terminal: bool, term: Option<&str>) -> Mode {
    match (stderr_is_terminal, term) {
        (false, _) => Mode::Plain,
        (true, Some("dumb")) => Mode::Plain,
        (true, _) => Mode::Bar,
    }
}

/// A [`Reporter`] writing to stderr (or, in tests, anywhere).
pub struct StderrReporter {
    out: Mutex<Box<dyn Write + Send>>,
    mode: Mode,
    /// The bar of the stepped operation in progress, and where a new one draws.
    bar: Mutex<Option<ProgressBar>>,
    target: Mutex<Option<ProgressDrawTarget>>,
}

impl StderrReporter {
    /// For this process's stderr, in the mode its terminal calls for.
    pub fn for_stderr() -> StderrReporter {
        let term = super::env().get(crate::env::TERM);
        let mode = mode(std::io::stderr().is_terminal(), term.as_deref());
        StderrReporter::with(Box::new(std::io::stderr()), mode, None)
    }

    /// Plain lines only (followed logs, which are not stepped work).
    pub fn plain_stderr() -> StderrReporter {
        StderrReporter::with(Box::new(std::io::stderr()), Mode::Plain, None)
    }

    /// Plain lines to `out`, or a bar drawn on `target` (stderr when `None`).
    pub fn with(
        out: Box<dyn Write + Send>,
        mode: Mode,
        target: Option<ProgressDrawTarget>,
    ) -> StderrReporter {
        StderrReporter {
            out: Mutex::new(out),
            mode,
            bar: Mutex::new(None),
            target: Mutex::new(target),
        }
    }

    fn print(&self, text: &str) {
        if let Ok(mut out) = self.out.lock() {
            let _ = writeln!(out, "{text}").and_then(|_| out.flush());
        }
    }

    fn new_bar(&self, total: u32) -> ProgressBar {
        let target = self
            .target
            .lock()
            .ok()
            .and_then(|mut t| t.take())
            .unwrap_or_else(ProgressDrawTarget::stderr);
        let bar = ProgressBar::with_draw_target(Some(u64::from(total)), target);
        if let Ok(style) =
            ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {wide_msg}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }
}

impl Reporter for StderrReporter {
    fn line(&self, text: &str) {
        if let Ok(bar) = self.bar.lock() {
            if let Some(bar) = bar.as_ref() {
                // The step's output scrolls under the bar as its message.
                bar.set_message(text.trim().to_string());
                return;
            }
        }
        self.print(text);
    }

    fn step(&self, n: u32, total: u32, text: &str) {
        if self.mode == Mode::Plain {
            self.print(text);
            return;
        }
        if let Ok(mut bar) = self.bar.lock() {
            let bar = bar.get_or_insert_with(|| self.new_bar(total));
            bar.set_length(u64::from(total));
            bar.set_position(u64::from(n.saturating_sub(1)));
            bar.set_message(text.trim().to_string());
        }
    }

    fn done(&self) {
        if let Ok(mut bar) = self.bar.lock() {
            if let Some(bar) = bar.take() {
                bar.finish_and_clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A `Write` whose bytes the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    /// A terminal that records what the bar draws.
    #[derive(Debug, Default, Clone)]
    struct Screen(Arc<Mutex<String>>);

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            100
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(&format!("{s}\n"));
            Ok(())
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_bar_only_on_a_terminal_that_redraws() {
        assert_eq!(mode(false, None), Mode::Plain);
        assert_eq!(mode(false, Some("xterm-256color")), Mode::Plain);
        assert_eq!(mode(true, Some("dumb")), Mode::Plain);
        assert_eq!(mode(true, Some("xterm-256color")), Mode::Bar);
        assert_eq!(mode(true, None), Mode::Bar);
    }

    #[test]
    fn off_a_terminal_every_event_is_one_plain_line() {
        let out = Shared::default();
        let r = StderrReporter::with(Box::new(out.clone()), Mode::Plain, None);
        r.line("building afhttp-host:0.1.0");
        r.step(1, 2, "Step 1/2 : FROM debian");
        r.line(" ---> 4f2a");
        r.step(2, 2, "Step 2/2 : RUN true");
        r.done();
        r.line("built");
        assert_eq!(
            out.text(),
            "building afhttp-host:0.1.0\nStep 1/2 : FROM debian\n ---> 4f2a\nStep 2/2 : RUN true\nbuilt\n"
        );
    }

    #[test]
    fn on_a_terminal_steps_draw_a_bar_and_leave_no_lines() {
        let out = Shared::default();
        let screen = Screen::default();
        let target = ProgressDrawTarget::term_like(Box::new(screen.clone()));
        let r = StderrReporter::with(Box::new(out.clone()), Mode::Bar, Some(target));
        r.line("building afhttp-host:0.1.0");
        r.step(3, 12, "Step 3/12 : RUN apt-get update");
        r.line(" ---> Running in 4f2a");
        if let Some(bar) = r.bar.lock().unwrap().as_ref() {
            bar.tick();
        }
        let drawn = screen.0.lock().unwrap().clone();
        assert!(drawn.contains("2/12"), "{drawn:?}");
        r.done();
        assert!(r.bar.lock().unwrap().is_none());
        // Only the line before any step went out as a plain line.
        assert_eq!(out.text(), "building afhttp-host:0.1.0\n");
    }
}
