//! The deterministic engine: replay a corpus, then mutate it with a seeded generator, one
//! input at a time in a worker thread with a deadline. A panic, a hang (the deadline
//! passed) or an allocation past [`crate::guard::SOFT_LIMIT`] is a finding: its input is
//! written to the crash folder and named in the report.

use crate::{guard, hash, Target};
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most inputs kept for mutation.
pub const POOL_CAP: usize = 4096;

pub struct Config {
    /// Mutated inputs to try after the replay (the replay always runs whole).
    pub iterations: u64,
    /// Stop mutating after this long.
    pub time: Duration,
    pub seed: u64,
    /// Folders whose every file is replayed, then mutated.
    pub corpus: Vec<PathBuf>,
    /// Where failing inputs go.
    pub crashes: PathBuf,
    /// Where inputs with a new signature are saved (none: kept in memory only).
    pub save_new: Option<PathBuf>,
    /// One input may take this long before it counts as a hang.
    pub deadline: Duration,
    /// The worker thread's stack: [`PROGRAM_STACK`], as much as a program's main thread
    /// gives the mock.
    pub stack: usize,
}

pub const PROGRAM_STACK: usize = 8 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Panic,
    Hang,
    LargeAllocation,
}

#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: Kind,
    pub message: String,
    /// The input, as written to the crash folder.
    pub input: PathBuf,
}

#[derive(Debug, Default)]
pub struct Report {
    pub replayed: usize,
    pub mutated: u64,
    pub signatures: usize,
    pub pool: usize,
    pub findings: Vec<Finding>,
    pub elapsed: Duration,
}

/// A worker thread that runs one input at a time; a hang leaves it behind.
struct Worker {
    to: Sender<Arc<[u8]>>,
    from: Receiver<Result<u64, String>>,
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Records a panic's message and place for the thread that panicked, instead of printing
/// it (the report prints it, once, with the input's file).
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() == Some("fuzz-worker") {
                let msg = info.to_string();
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(msg));
            } else {
                default(info);
            }
        }));
    });
}

/// The message of the last panic on this thread, taken (a panic that something under
/// the target caught counts too: the mock's boundary turns its panics into an error code).
pub fn take_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}

impl Worker {
    fn spawn(run: fn(&[u8]) -> u64, prefix: &'static [u8], stack: usize) -> Worker {
        let (to, inputs) = channel::<Arc<[u8]>>();
        let (results, from) = channel();
        std::thread::Builder::new()
            .name("fuzz-worker".into())
            // A program's main thread has 8 MiB: as much stack as a caller gives the mock.
            .stack_size(stack)
            .spawn(move || {
                for input in inputs {
                    guard::set_current(&input, prefix);
                    take_panic();
                    let r = catch_unwind(AssertUnwindSafe(|| run(&input)));
                    let caught = take_panic();
                    guard::clear_current();
                    let r = match (r, caught) {
                        (Ok(sig), None) => Ok(sig),
                        (Ok(_), Some(m)) => Err(format!("caught inside the target: {m}")),
                        (Err(_), m) => Err(m.unwrap_or_else(|| "panic".into())),
                    };
                    if results.send(r).is_err() {
                        break;
                    }
                }
            })
            .expect("spawn the fuzz worker");
        Worker { to, from }
    }
}

pub struct Session<'t> {
    target: &'t Target,
    cfg: Config,
    worker: Worker,
    seen: HashSet<u64>,
    pool: Vec<Vec<u8>>,
    report: Report,
}

/// The files of a folder, sorted by name (a missing folder is empty).
pub fn read_dir(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
        .collect()
}

impl<'t> Session<'t> {
    pub fn new(target: &'t Target, cfg: Config) -> Self {
        quiet_panics();
        let prefix = guard::install(&cfg.crashes, target.name);
        Session {
            target,
            worker: Worker::spawn(target.run, prefix, cfg.stack),
            cfg,
            seen: HashSet::new(),
            pool: Vec::new(),
            report: Report::default(),
        }
    }

    /// Runs one input; false when the session must stop (a hang: the worker is stuck).
    fn one(&mut self, input: Vec<u8>) -> bool {
        let shared: Arc<[u8]> = input.into();
        guard::take_largest();
        self.worker.to.send(shared.clone()).expect("worker alive");
        let (result, go_on) = match self.worker.from.recv_timeout(self.cfg.deadline) {
            Ok(r) => (r, true),
            Err(RecvTimeoutError::Timeout) => (
                Err(format!("hang: still running after {:?}", self.cfg.deadline)),
                false,
            ),
            Err(RecvTimeoutError::Disconnected) => (Err("the worker died".into()), false),
        };
        let large = guard::take_largest();
        let input: &[u8] = &shared;
        match result {
            Ok(sig) if large == 0 => {
                if self.seen.insert(sig) {
                    // A bounded pool: a new input replaces a random one past the cap.
                    if self.pool.len() < POOL_CAP {
                        self.pool.push(input.to_vec());
                    } else {
                        let i = fastrand::usize(..POOL_CAP);
                        self.pool[i] = input.to_vec();
                    }
                    if let Some(dir) = &self.cfg.save_new {
                        let _ = std::fs::create_dir_all(dir);
                        let _ = std::fs::write(dir.join(format!("{:016x}", hash(input))), input);
                    }
                }
            }
            Ok(_) => self.found(
                Kind::LargeAllocation,
                format!("allocated {large} bytes at once"),
                input,
            ),
            Err(m) => {
                let kind = if go_on { Kind::Panic } else { Kind::Hang };
                self.found(kind, m, input)
            }
        }
        go_on
    }

    fn found(&mut self, kind: Kind, message: String, input: &[u8]) {
        let _ = std::fs::create_dir_all(&self.cfg.crashes);
        let tag = match kind {
            Kind::Panic => "panic",
            Kind::Hang => "hang",
            Kind::LargeAllocation => "alloc",
        };
        let path =
            self.cfg
                .crashes
                .join(format!("{}-{tag}-{:016x}", self.target.name, hash(input)));
        let _ = std::fs::write(&path, input);
        // One finding per message (the same bug reached from many inputs counts once).
        let key = crate::signature(&[tag, &message]);
        if self.report.findings.iter().any(|f| {
            crate::signature(&[
                match f.kind {
                    Kind::Panic => "panic",
                    Kind::Hang => "hang",
                    Kind::LargeAllocation => "alloc",
                },
                &f.message,
            ]) == key
        }) {
            let _ = std::fs::remove_file(&path);
            return;
        }
        eprintln!(
            "cumock-fuzz: {}: {kind:?}: {message}\n  input: {}",
            self.target.name,
            path.display()
        );
        self.report.findings.push(Finding {
            kind,
            message,
            input: path,
        });
    }

    /// Replays every corpus file, then mutates the pool until the iterations or the
    /// time run out, or an input hangs.
    pub fn run(mut self) -> Report {
        let start = Instant::now();
        let mut seeds = Vec::new();
        for dir in &self.cfg.corpus {
            seeds.extend(read_dir(dir).into_iter().map(|(_, b)| b));
        }
        for s in seeds {
            self.report.replayed += 1;
            self.pool.push(s.clone());
            if !self.one(s) {
                return self.finish(start);
            }
        }
        if self.pool.is_empty() {
            self.pool.push(Vec::new());
        }
        let mut rng = fastrand::Rng::with_seed(self.cfg.seed);
        while self.report.mutated < self.cfg.iterations && start.elapsed() < self.cfg.time {
            let mut input = self.pool[rng.usize(..self.pool.len())].clone();
            for _ in 0..rng.usize(1..4) {
                (self.target.mutate)(&mut input, &mut rng, &self.pool);
            }
            input.truncate(self.target.max_len);
            self.report.mutated += 1;
            if !self.one(input) {
                break;
            }
        }
        self.finish(start)
    }

    fn finish(mut self, start: Instant) -> Report {
        self.report.elapsed = start.elapsed();
        self.report.signatures = self.seen.len();
        self.report.pool = self.pool.len();
        self.report
    }
}

/// Runs one input in this thread, as libFuzzer does: a finding panics (libFuzzer then
/// writes the input and stops), an allocation past the soft limit too.
pub fn run_checked(target: &Target, data: &[u8]) -> u64 {
    guard::take_largest();
    take_panic();
    let sig = (target.run)(data);
    let large = guard::take_largest();
    assert!(large == 0, "allocated {large} bytes at once");
    sig
}
