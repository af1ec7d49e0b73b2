//! Long fuzzing runs of pcsim's inputs (the same harness as the `fuzz` integration test).
//!
//! ```text
//! cargo run --release --example fuzz -- --seconds 60 [--seed N] [--save] [--cpu-limit S]
//!     [--wall-limit S] [--memory-mb M] [--progress-seconds S] [--in-process]
//! ```
//! Each input runs in a worker process (this binary with `--worker`), which is killed and started
//! again when an input uses more than `--cpu-limit` seconds of CPU (default 30) or `--wall-limit`
//! seconds of wall time (default 300: only a backstop, so that load from other programs does not look
//! like a hang), or dies (its address space is limited to `--memory-mb`, default 4096). So no input
//! can stall the run: it ends at most one wall limit after `--seconds`. A progress line (inputs so far,
//! per target, failures, the input running now) is printed every `--progress-seconds` (default 60).
//! `--in-process` runs inputs on threads of this process instead (a hung thread cannot be stopped).
//!
//! `--save` writes the first input of each distinct failure to tests/fuzz/regressions/<target>/ as
//! soon as it is found, so it becomes a regression test. Exit code 1 when any input failed.

#[path = "../tests/fuzz/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use harness::{Executor, Outcome, ProcessRun, Target};

struct Options {
    seconds: u64,
    seed: u64,
    iters: u64,
    save: bool,
    cpu_limit: f64,
    wall_limit: u64,
    memory_mb: u64,
    progress_seconds: u64,
    in_process: bool,
    worker: bool,
    /// Fuzz only this target (its folder name), e.g. a new parser's hour.
    only: Option<Target>,
}

fn parse_args() -> Options {
    let mut o = Options {
        seconds: 60,
        seed: 1,
        iters: u64::MAX,
        save: false,
        cpu_limit: 30.0,
        wall_limit: 300,
        memory_mb: 4096,
        progress_seconds: 60,
        in_process: false,
        worker: false,
        only: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> u64 {
            args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                eprintln!("{name} needs a number");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--seconds" => o.seconds = value("--seconds"),
            "--seed" => o.seed = value("--seed"),
            "--iters" => o.iters = value("--iters"),
            "--cpu-limit" => o.cpu_limit = value("--cpu-limit") as f64,
            "--wall-limit" => o.wall_limit = value("--wall-limit"),
            "--memory-mb" => o.memory_mb = value("--memory-mb"),
            "--progress-seconds" => o.progress_seconds = value("--progress-seconds").max(1),
            "--save" => o.save = true,
            "--in-process" => o.in_process = true,
            "--worker" => o.worker = true,
            "--target" => {
                let name = args.next().unwrap_or_default();
                match Target::ALL.iter().find(|t| t.dir() == name) {
                    Some(t) => o.only = Some(*t),
                    None => {
                        let names: Vec<&str> = Target::ALL.iter().map(|t| t.dir()).collect();
                        eprintln!("--target needs one of {}", names.join(", "));
                        std::process::exit(2)
                    }
                }
            }
            _ => {
                eprintln!(
                    "usage: fuzz [--seconds N] [--seed N] [--iters N] [--save] [--cpu-limit S] \
                     [--wall-limit S] [--memory-mb M] [--progress-seconds S] [--in-process] \
                     [--target NAME]"
                );
                std::process::exit(2);
            }
        }
    }
    o
}

// Worker protocol (stdin/stdout of the worker, little endian):
//   request: target index u8, with_process u8, length u32, input bytes
//   reply:   kind u8 (0 accepted, 1 refused, 2 panicked, 3 hung, 4 ended), process run u8
//            (0 not run, 1 accepted, 2 refused), length u32, message bytes

fn read_frame(r: &mut impl Read) -> std::io::Result<(u8, u8, Vec<u8>)> {
    let mut head = [0u8; 6];
    r.read_exact(&mut head)?;
    let len = u32::from_le_bytes([head[2], head[3], head[4], head[5]]) as usize;
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    Ok((head[0], head[1], body))
}

fn write_frame(w: &mut impl Write, a: u8, b: u8, body: &[u8]) -> std::io::Result<()> {
    let mut frame = Vec::with_capacity(6 + body.len());
    frame.push(a);
    frame.push(b);
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(body);
    w.write_all(&frame)?;
    w.flush()
}

/// Limits this process's address space, so a memory blowup ends the worker (allocation failure,
/// SIGABRT) instead of the machine.
fn limit_memory(mb: u64) {
    #[cfg(unix)]
    {
        let bytes = mb.saturating_mul(1 << 20) as libc::rlim_t;
        let limit = libc::rlimit {
            rlim_cur: bytes,
            rlim_max: bytes,
        };
        // SAFETY: setrlimit reads the struct we pass; it changes only this process's limits.
        let rc = unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) };
        if rc != 0 {
            eprintln!("worker: cannot limit memory to {mb} MB");
        }
    }
    #[cfg(not(unix))]
    let _ = mb;
}

fn worker(o: &Options) {
    limit_memory(o.memory_mb);
    harness::install_panic_recorder();
    let corpus = harness::Corpus::load();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut output = stdout.lock();
    while let Ok((ti, with_process, bytes)) = read_frame(&mut input) {
        let Some(&target) = Target::ALL.get(ti as usize) else {
            std::process::exit(2)
        };
        let outcome = harness::execute_caught(target, &bytes, &corpus.base);
        let (outcome, run) = if with_process != 0 {
            harness::with_process_run(outcome, &bytes)
        } else {
            (outcome, ProcessRun::NotRun)
        };
        let (kind, message) = match outcome {
            Outcome::Accepted => (0, String::new()),
            Outcome::Refused(m) => (1, m),
            Outcome::Panicked(m) => (2, m),
            Outcome::Hung => (3, String::new()),
            Outcome::Ended(m) => (4, m),
        };
        let run = match run {
            ProcessRun::NotRun => 0,
            ProcessRun::Accepted => 1,
            ProcessRun::Refused => 2,
        };
        if write_frame(&mut output, kind, run, message.as_bytes()).is_err() {
            return;
        }
    }
}

type Reply = (Outcome, ProcessRun);

struct Worker {
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<Option<Reply>>,
}

impl Worker {
    fn start(memory_mb: u64) -> std::io::Result<Worker> {
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .args(["--worker", "--memory-mb", &memory_mb.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = child.stdout.take().expect("piped stdout");
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || loop {
            let reply = read_frame(&mut stdout).ok().map(|(kind, run, body)| {
                let m = String::from_utf8_lossy(&body).into_owned();
                let outcome = match kind {
                    0 => Outcome::Accepted,
                    1 => Outcome::Refused(m),
                    2 => Outcome::Panicked(m),
                    3 => Outcome::Hung,
                    _ => Outcome::Ended(m),
                };
                let run = match run {
                    1 => ProcessRun::Accepted,
                    2 => ProcessRun::Refused,
                    _ => ProcessRun::NotRun,
                };
                (outcome, run)
            });
            let end = reply.is_none();
            if tx.send(reply).is_err() || end {
                return;
            }
        });
        Ok(Worker {
            child,
            stdin,
            replies,
        })
    }

    /// User plus system CPU seconds of the worker (all its threads), from /proc.
    fn cpu_seconds(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        let rest = &stat[stat.rfind(')')? + 1..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
        #[cfg(unix)]
        // SAFETY: sysconf only reads a configuration value.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        #[cfg(not(unix))]
        let hz = 100.0;
        Some(ticks / hz.max(1.0))
    }
}

/// Runs each input in a worker process; ends and replaces a worker that hangs or dies.
struct Supervisor {
    worker: Option<Worker>,
    cpu_limit: f64,
    wall_limit: Duration,
    memory_mb: u64,
    restarts: u64,
}

impl Supervisor {
    fn end_worker(&mut self, kill: bool) -> String {
        let Some(mut w) = self.worker.take() else {
            return "no worker".into();
        };
        self.restarts += 1;
        if kill {
            let _ = w.child.kill();
        }
        drop(w.stdin);
        match w.child.wait() {
            Ok(status) => {
                #[cfg(unix)]
                {
                    use std::os::unix::process::ExitStatusExt;
                    if let Some(sig) = status.signal() {
                        let why = match sig {
                            6 => " (SIGABRT: an allocation failed under the memory limit, or an abort)",
                            9 => " (SIGKILL: killed by this supervisor or the OOM killer)",
                            _ => "",
                        };
                        return format!("worker ended by signal {sig}{why}");
                    }
                }
                format!("worker exited: {status}")
            }
            Err(e) => format!("worker cannot be waited for: {e}"),
        }
    }
}

impl Executor for Supervisor {
    fn run(&mut self, target: Target, input: &[u8], with_process: bool) -> Reply {
        if self.worker.is_none() {
            match Worker::start(self.memory_mb) {
                Ok(w) => self.worker = Some(w),
                Err(e) => {
                    return (
                        Outcome::Ended(format!("cannot start a worker: {e}")),
                        ProcessRun::NotRun,
                    )
                }
            }
        }
        let w = self.worker.as_mut().expect("worker");
        let ti = Target::ALL.iter().position(|t| *t == target).unwrap_or(0) as u8;
        let cpu0 = w.cpu_seconds().unwrap_or(0.0);
        let t0 = Instant::now();
        if write_frame(&mut w.stdin, ti, with_process as u8, input).is_err() {
            let why = self.end_worker(false);
            return (
                Outcome::Ended(format!("worker gone before the input: {why}")),
                ProcessRun::NotRun,
            );
        }
        loop {
            let w = self.worker.as_ref().expect("worker");
            match w.replies.recv_timeout(Duration::from_millis(200)) {
                Ok(Some(reply)) => return reply,
                Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                    let why = self.end_worker(false);
                    return (
                        Outcome::Ended(format!("worker died after {:.1?}: {why}", t0.elapsed())),
                        ProcessRun::NotRun,
                    );
                }
                Err(RecvTimeoutError::Timeout) => {
                    let cpu = w.cpu_seconds().map(|c| c - cpu0);
                    let wall = t0.elapsed();
                    if cpu.is_some_and(|c| c > self.cpu_limit) || wall > self.wall_limit {
                        let why = self.end_worker(true);
                        return (
                            Outcome::Ended(format!(
                                "hang: {:.1} s CPU, {wall:.1?} wall (limits {} s CPU, {:?} wall); {why}",
                                cpu.unwrap_or(f64::NAN),
                                self.cpu_limit,
                                self.wall_limit
                            )),
                            ProcessRun::NotRun,
                        );
                    }
                }
            }
        }
    }
}

fn main() {
    let o = parse_args();
    if o.worker {
        worker(&o);
        return;
    }
    let mut corpus = harness::Corpus::load();
    let captures = corpus.add_reference_captures();
    if let Some(only) = o.only {
        corpus.entries.retain(|(t, _, _)| *t == only);
        println!("target: {} only", only.dir());
    }
    println!(
        "corpus: {} inputs ({captures} real MCP captures from tests/fixtures/reference)",
        corpus.entries.len()
    );
    println!(
        "seed {}, {} s, {}; progress every {} s",
        o.seed,
        o.seconds,
        if o.in_process {
            "in process (hang limit 30 s wall)".to_string()
        } else {
            format!(
                "worker process (limits {} s CPU, {} s wall, {} MB address space per input)",
                o.cpu_limit, o.wall_limit, o.memory_mb
            )
        },
        o.progress_seconds
    );
    let progress = harness::Progress::default();
    let done = AtomicBool::new(false);
    let start = Instant::now();
    let mut seen = std::collections::HashSet::new();
    let save = o.save;
    let mut on_failure = |f: &harness::Failure| {
        // One report (and one saved file) per distinct failure: target and the message without
        // the input number.
        let what = f.what.split_once(": ").map_or(f.what.as_str(), |(_, w)| w);
        let key = format!("{:?} {}", f.target, what.lines().next().unwrap_or(""));
        println!(
            "FAILURE {:?} {}",
            f.target,
            f.what.lines().next().unwrap_or("")
        );
        if seen.insert(key) && save {
            match f.save(&harness::fuzz_dir().join("regressions")) {
                Ok(p) => println!("  saved {}", p.display()),
                Err(e) => println!("  cannot save: {e}"),
            }
        }
    };
    let mut supervisor = Supervisor {
        worker: None,
        cpu_limit: o.cpu_limit,
        wall_limit: Duration::from_secs(o.wall_limit),
        memory_mb: o.memory_mb,
        restarts: 0,
    };
    let corpus_base = corpus.base.clone();
    let mut in_process = harness::InProcess {
        base: &corpus_base,
        hang_limit: Duration::from_secs(30),
    };
    let stats = std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut next = Duration::from_secs(o.progress_seconds);
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                if start.elapsed() >= next {
                    println!("{}", progress.snapshot().line(start.elapsed()));
                    next += Duration::from_secs(o.progress_seconds);
                }
            }
        });
        let exec: &mut dyn Executor = if o.in_process {
            &mut in_process
        } else {
            &mut supervisor
        };
        let stats = harness::fuzz_with(
            &corpus,
            o.seed,
            o.iters,
            Some(Duration::from_secs(o.seconds)),
            exec,
            &progress,
            &mut on_failure,
        );
        done.store(true, Ordering::Relaxed);
        stats
    });
    let slowest = stats
        .slowest_input
        .map(|(t, i)| format!(" ({} input #{i})", t.dir()))
        .unwrap_or_default();
    println!(
        "seed {}: {} inputs in {:.1?} ({:.0}/s): {}; MCP scripts also run as a process: {} ({} accepted); {} accepted, {} refused, {} failures; slowest input {:.1?}{slowest}; worker restarts {}",
        o.seed,
        stats.executed,
        stats.elapsed,
        stats.executed as f64 / stats.elapsed.as_secs_f64().max(1e-9),
        stats.per_target_summary(),
        stats.process_runs.0,
        stats.process_runs.1,
        stats.accepted,
        stats.refused,
        stats.failures.len(),
        stats.slowest,
        supervisor.restarts
    );
    println!(
        "time per target (catalog, scenario, tools, replay, litellm, config, mcp, trace): {:.1?}",
        stats.per_target_time
    );
    if let Some(mut w) = supervisor.worker.take() {
        drop(w.stdin);
        let _ = w.child.wait();
    }
    if !stats.failures.is_empty() {
        std::process::exit(1);
    }
}
