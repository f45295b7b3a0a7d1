//! Deadlines for everything a test waits on: a child process, a line it prints, a condition.
//! A hung binary fails its test with its argv and output instead of stalling CI.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long one run of the built binary may take unless the test says otherwise: long
/// enough for a cold browser fetch on a loaded 2-core machine.
pub const RUN_DEADLINE: Duration = Duration::from_secs(180);

/// Poll `f` until it holds (panics after `bound`); how long it took.
pub fn wait_for(what: &str, bound: Duration, mut f: impl FnMut() -> bool) -> Duration {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < bound, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
    t.elapsed()
}

/// Poll `f` until it holds or `bound` passes; whether it held. For waits whose failure the
/// caller reports with its own assertion (and context).
pub fn wait_until(bound: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    loop {
        if f() {
            return true;
        }
        if t.elapsed() >= bound {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// [`wait_until`] for async code: poll `f` until it holds or `bound` passes; whether it held.
pub async fn wait_until_async<F: std::future::Future<Output = bool>>(
    bound: Duration,
    mut f: impl FnMut() -> F,
) -> bool {
    let t = Instant::now();
    loop {
        if f().await {
            return true;
        }
        if t.elapsed() >= bound {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A pipe drained on a thread into a buffer that can be read at any time (also after a
/// kill, when a grandchild may still hold the pipe open).
pub struct Drain {
    buf: Arc<Mutex<Vec<u8>>>,
    thread: Option<JoinHandle<()>>,
}

impl Drain {
    /// Start draining `pipe` (`None`: nothing to drain).
    pub fn start(pipe: Option<impl Read + Send + 'static>) -> Drain {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let thread = pipe.map(|mut pipe| {
            let buf = Arc::clone(&buf);
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = pipe.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    buf.lock().unwrap().extend_from_slice(&chunk[..n]);
                }
            })
        });
        Drain { buf, thread }
    }

    /// What was read so far.
    pub fn so_far(&self) -> Vec<u8> {
        self.buf.lock().unwrap().clone()
    }

    /// Everything, once the pipe closed (at most `bound`; then what was read so far).
    pub fn finish(mut self, bound: Duration) -> Vec<u8> {
        let t = Instant::now();
        if let Some(thread) = self.thread.take() {
            while !thread.is_finished() && t.elapsed() < bound {
                std::thread::sleep(Duration::from_millis(10));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
        self.so_far()
    }
}

/// Wait for `child` to exit within `bound`; past it, kill it and panic with `what`
/// (argv and whatever else identifies it).
pub fn wait_within(child: &mut Child, bound: Duration, what: &str) -> ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if t.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not exit within {bound:?}; killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Spawn `cmd` with stdout and stderr piped and collect its output like
/// [`Command::output`], but kill it and panic with its argv and output after `bound`.
pub fn output_within(cmd: &mut Command, bound: Duration) -> Output {
    let what = format!("{cmd:?}");
    cmd.output_within(bound)
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"))
}

/// Wait for an already spawned `child` (stdout and stderr piped) within `bound` and collect
/// its output; past the deadline kill it and panic with `what` and the output so far.
pub fn collect_within(child: &mut Child, bound: Duration, what: &str) -> Output {
    let out = Drain::start(child.stdout.take());
    let err = Drain::start(child.stderr.take());
    let t = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if t.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what} did not exit within {bound:?}; killed\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out.so_far()),
                String::from_utf8_lossy(&err.so_far())
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // The process is gone; a grandchild that kept the pipe open does not hold the test.
    let linger = Duration::from_secs(5);
    Output {
        status,
        stdout: out.finish(linger),
        stderr: err.finish(linger),
    }
}

/// The first line `child` prints on stdout, within `bound`; past it, kill the child and
/// panic with `what`. The rest of stdout is not read (as a host prints one event).
pub fn first_line_within(child: &mut Child, bound: Duration, what: &str) -> String {
    let stdout = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    match rx.recv_timeout(bound) {
        Ok(line) => line,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} printed no line within {bound:?}; killed");
        }
    }
}

/// Kills a child that outlives its deadline, so a blocking read on its pipes returns and
/// the test fails instead of hanging. Disarmed on drop.
pub struct Watchdog {
    done: Arc<std::sync::atomic::AtomicBool>,
}

impl Watchdog {
    /// Watch `pid` (`what` names it in the log line printed when it fires).
    pub fn new(pid: u32, bound: Duration, what: &str) -> Watchdog {
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Arc::clone(&done);
        let what = what.to_string();
        std::thread::spawn(move || {
            let t = Instant::now();
            while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                if t.elapsed() > bound {
                    eprintln!("watchdog: {what} (pid {pid}) ran past {bound:?}; SIGKILL");
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid as i32),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Watchdog { done }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// `Command::output` and `Command::status` with a deadline: past it the child is killed and
/// the test fails with its argv (and output). A child that cannot start is still an `Err`,
/// for the caller's own message.
pub trait CommandDeadline {
    /// Like [`Command::output`], within `bound`.
    fn output_within(&mut self, bound: Duration) -> std::io::Result<Output>;
    /// Like [`Command::status`] (stdout and stderr inherited), within `bound`.
    fn status_within(&mut self, bound: Duration) -> std::io::Result<ExitStatus>;
}

impl CommandDeadline for Command {
    fn output_within(&mut self, bound: Duration) -> std::io::Result<Output> {
        let what = format!("{self:?}");
        let mut child = self.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        Ok(collect_within(&mut child, bound, &what))
    }

    fn status_within(&mut self, bound: Duration) -> std::io::Result<ExitStatus> {
        let what = format!("{self:?}");
        let mut child = self.spawn()?;
        Ok(wait_within(&mut child, bound, &what))
    }
}
