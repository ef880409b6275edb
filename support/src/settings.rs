//! Every `CUMOCK_*` variable the libraries read, read once (at the first
//! [`settings()`]) into one typed [`Settings`]. A value that does not parse leaves the
//! default in place and a message in [`Settings::problems`], which the mock driver says
//! on stderr; the model and the kernel engine receive values, never the environment.
//!
//! | variable | field | value |
//! |---|---|---|
//! | `CUMOCK_TRACE=FILE` | `trace` | every call as a JSON line, appended to FILE |
//! | `CUMOCK_LEAKS=1` | `leaks` | a leak report at exit |
//! | `CUMOCK_MISUSE=1` | `misuse` | a message for each call that breaks a rule |
//! | `CUMOCK_STRICT=1` | `strict` (and `leaks`, `misuse`) | misuse and leaks make the process exit with status 86 |
//! | `CUMOCK_FAULT=SPEC,...` | `faults` | calls failed on purpose ([`crate::faults`]) |
//! | `CUMOCK_PROFILE=FILE` | `profile` | the devices, from a profile file |
//! | `CUMOCK_DEVICES=N` | `devices` | N devices (a bad number: the driver has no device) |
//! | `CUMOCK_DEVICE_MEMORY=SIZE` | `device_memory` | host memory that may back device memory (`8G`, `512M`, `4096`) |
//! | `CUMOCK_LENIENT=1` | `lenient` | let pass what the real driver lets pass although CUDA forbids it |
//! | `CUMOCK_SCHEDULE=eager\|lazy\|random:SEED` | `schedule` | when stream workers run queued work |
//! | `CUMOCK_KERNEL_THREADS=N` | `kernel_threads` | host threads a launch runs on (default: the CPUs) |
//! | `CUMOCK_KERNEL_TIMEOUT=SECONDS` | `kernel_timeout` | a launch's wall-clock limit (default 300 s; 0: none) |
//! | `CUMOCK_KERNEL_STEP_LIMIT=N` | `kernel_step_limit` | instructions a warp may issue (default: no limit) |
//! | `CUMOCK_KERNEL_ENGINE=interp\|jit\|tiered` | `kernel_engine` | what runs kernels (default: tiered) |
//! | `CUMOCK_JIT_UNITS=1`, `CUMOCK_JIT_DISASM=1`, `CUMOCK_JIT_DUMP=DIR` | `jit_units`, `jit_disasm`, `jit_dump` | the JIT's workings on stderr or in DIR, for tuning (of the kernels it compiles: all of them under `CUMOCK_KERNEL_ENGINE=jit`) |
//! | `CUMOCK_PASSTHROUGH_TRACE=FILE` | `passthrough_trace` | the pass-through recorder's trace file |
//! | `CUMOCK_REAL_DRIVER=FILE` | `real_driver` | the NVIDIA driver the pass-through forwards to |
//!
//! A switch is on when set to anything but `0` or nothing.

use crate::faults::FaultSpecs;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// A launch's wall-clock limit when `CUMOCK_KERNEL_TIMEOUT` says nothing: five minutes,
/// far beyond what a kernel of a test suite takes on the host, and far below the hours
/// after which a CI job that hangs is killed without a word.
pub const DEFAULT_KERNEL_TIMEOUT_S: u64 = 300;

/// When a stream's worker runs its next job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schedule {
    /// As soon as what it follows has run.
    #[default]
    Eager,
    /// Only once something waits for it or asks whether it is done, or after a limit
    /// with nobody asking.
    Lazy,
    /// After a delay drawn from the seed, the queue and the job's place in it.
    Random(u64),
}

impl Schedule {
    /// `eager`, `lazy` or `random:SEED`.
    pub fn parse(text: &str) -> Result<Schedule, String> {
        match text.trim() {
            "" | "eager" => Ok(Schedule::Eager),
            "lazy" => Ok(Schedule::Lazy),
            t => match t.strip_prefix("random:").map(|n| n.trim().parse::<u64>()) {
                Some(Ok(seed)) => Ok(Schedule::Random(seed)),
                _ => Err(format!(
                    "CUMOCK_SCHEDULE={t:?} is not eager, lazy or random:SEED (a number): \
                     eager holds"
                )),
            },
        }
    }
}

/// What runs kernels: the interpreter (the reference), the JIT from a kernel's first
/// launch, or the interpreter until compiling pays (tiered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelEngine {
    Interp,
    Jit,
    Tiered,
}

/// `8G`, `512M`, `1T`, `4096` (bytes), binary units, an optional `iB` or `B`.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s
        .strip_suffix("iB")
        .or_else(|| s.strip_suffix('B'))
        .unwrap_or(s);
    let (digits, shift) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 10),
        'm' | 'M' => (&s[..s.len() - 1], 20),
        'g' | 'G' => (&s[..s.len() - 1], 30),
        't' | 'T' => (&s[..s.len() - 1], 40),
        _ => (s, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// The process's settings (see the module's table).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub trace: Option<PathBuf>,
    pub leaks: bool,
    pub misuse: bool,
    pub strict: bool,
    pub faults: FaultSpecs,
    pub profile: Option<PathBuf>,
    /// A number of devices; an error (said by the driver at each call) where the value
    /// is not a number.
    pub devices: Result<Option<usize>, String>,
    /// The limit and how it was set (`CUMOCK_DEVICE_MEMORY=8G`), for messages.
    pub device_memory: Option<(u64, String)>,
    pub lenient: bool,
    pub schedule: Schedule,
    pub kernel_threads: Option<usize>,
    pub kernel_timeout: Option<Duration>,
    pub kernel_step_limit: Option<u64>,
    pub kernel_engine: Option<KernelEngine>,
    pub jit_units: bool,
    pub jit_disasm: bool,
    pub jit_dump: Option<PathBuf>,
    pub passthrough_trace: Option<PathBuf>,
    pub real_driver: Option<PathBuf>,
    /// What did not parse, one message each (`CUMOCK_SCHEDULE="x" is not ...`).
    pub problems: Vec<String>,
}

impl Default for Settings {
    /// Every variable unset.
    fn default() -> Self {
        Self::from_lookup(|_| None)
    }
}

impl Settings {
    /// From this process's environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// From `lookup`, which gives a variable's value if it is set.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let mut problems = Vec::new();
        let on = |k: &str| lookup(k).is_some_and(|v| !v.is_empty() && v != "0");
        let path = |k: &str| lookup(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let strict = on("CUMOCK_STRICT");
        let devices = match lookup("CUMOCK_DEVICES") {
            None => Ok(None),
            Some(n) => n
                .parse()
                .map(Some)
                .map_err(|_| format!("CUMOCK_DEVICES={n} is not a number")),
        };
        let device_memory = lookup("CUMOCK_DEVICE_MEMORY").and_then(|v| match parse_size(&v) {
            Some(limit) => Some((limit, format!("CUMOCK_DEVICE_MEMORY={v}"))),
            None => {
                problems.push(format!(
                    "CUMOCK_DEVICE_MEMORY={v:?} is not a size (8G, 512M, 4096): the default \
                     holds"
                ));
                None
            }
        });
        let schedule = Schedule::parse(&lookup("CUMOCK_SCHEDULE").unwrap_or_default())
            .unwrap_or_else(|e| {
                problems.push(e);
                Schedule::Eager
            });
        let kernel_threads =
            lookup("CUMOCK_KERNEL_THREADS").and_then(|v| match v.trim().parse::<usize>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    problems.push(format!(
                        "CUMOCK_KERNEL_THREADS={v:?} is not a number of threads: one per CPU"
                    ));
                    None
                }
            });
        let timeout_s = match lookup("CUMOCK_KERNEL_TIMEOUT") {
            None => DEFAULT_KERNEL_TIMEOUT_S as f64,
            Some(v) => match v.trim().parse::<f64>() {
                Ok(s) if s.is_finite() && s >= 0.0 => s,
                _ => {
                    problems.push(format!(
                        "CUMOCK_KERNEL_TIMEOUT={v:?} is not a number of seconds: the \
                         default, {DEFAULT_KERNEL_TIMEOUT_S} s, holds"
                    ));
                    DEFAULT_KERNEL_TIMEOUT_S as f64
                }
            },
        };
        let kernel_timeout = (timeout_s > 0.0).then(|| Duration::from_secs_f64(timeout_s.min(1e9)));
        let kernel_step_limit =
            lookup("CUMOCK_KERNEL_STEP_LIMIT").and_then(|v| match v.trim().parse::<u64>() {
                Ok(n) => Some(n),
                Err(_) => {
                    problems.push(format!(
                        "CUMOCK_KERNEL_STEP_LIMIT={v:?} is not a number of instructions: no \
                         limit"
                    ));
                    None
                }
            });
        let kernel_engine = lookup("CUMOCK_KERNEL_ENGINE").and_then(|v| match v.as_str() {
            "interp" => Some(KernelEngine::Interp),
            "jit" => Some(KernelEngine::Jit),
            "tiered" => Some(KernelEngine::Tiered),
            _ => {
                problems.push(format!(
                    "CUMOCK_KERNEL_ENGINE={v:?} is not interp, jit or tiered: the default holds"
                ));
                None
            }
        });
        Settings {
            trace: path("CUMOCK_TRACE"),
            leaks: on("CUMOCK_LEAKS") || strict,
            misuse: on("CUMOCK_MISUSE") || strict,
            strict,
            faults: FaultSpecs::parse(&lookup("CUMOCK_FAULT").unwrap_or_default()),
            profile: path("CUMOCK_PROFILE"),
            devices,
            device_memory,
            lenient: on("CUMOCK_LENIENT"),
            schedule,
            kernel_threads,
            kernel_timeout,
            kernel_step_limit,
            kernel_engine,
            jit_units: on("CUMOCK_JIT_UNITS"),
            jit_disasm: on("CUMOCK_JIT_DISASM"),
            jit_dump: path("CUMOCK_JIT_DUMP"),
            passthrough_trace: path("CUMOCK_PASSTHROUGH_TRACE"),
            real_driver: path("CUMOCK_REAL_DRIVER"),
            problems,
        }
    }

    /// The trace file, opened for appending (the mock and the runtime write to the same
    /// one, whole lines each); `None` when not tracing, an error message when it cannot
    /// be opened.
    pub fn open_trace(&self) -> Option<Result<std::fs::File, String>> {
        let path = self.trace.as_ref()?;
        Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("CUMOCK_TRACE={}: {e}", path.display())),
        )
    }
}

/// The process's settings, read from the environment at the first call.
// Inlined across crates: every mock call asks, and the answer is one load once read.
#[inline]
pub fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(Settings::from_env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Settings {
        Settings::from_lookup(|k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn unset_is_the_defaults() {
        let s = Settings::default();
        assert!(!s.leaks && !s.misuse && !s.strict && !s.lenient);
        assert_eq!(s.devices, Ok(None));
        assert_eq!(s.schedule, Schedule::Eager);
        assert_eq!(s.kernel_timeout, Some(Duration::from_secs(300)));
        assert!(s.faults.is_empty() && s.problems.is_empty());
    }

    #[test]
    fn switches_and_strict() {
        let s = with(&[("CUMOCK_STRICT", "1"), ("CUMOCK_LENIENT", "0")]);
        assert!(s.strict && s.leaks && s.misuse && !s.lenient);
        assert!(with(&[("CUMOCK_LEAKS", "yes")]).leaks);
        assert!(!with(&[("CUMOCK_LEAKS", "")]).leaks);
    }

    #[test]
    fn values_parse() {
        let s = with(&[
            ("CUMOCK_DEVICES", "2"),
            ("CUMOCK_DEVICE_MEMORY", "512M"),
            ("CUMOCK_SCHEDULE", "random:7"),
            ("CUMOCK_KERNEL_TIMEOUT", "0"),
            ("CUMOCK_KERNEL_ENGINE", "interp"),
            ("CUMOCK_KERNEL_THREADS", "3"),
            ("CUMOCK_TRACE", "/tmp/t.jsonl"),
        ]);
        assert_eq!(s.devices, Ok(Some(2)));
        assert_eq!(
            s.device_memory,
            Some((512 << 20, "CUMOCK_DEVICE_MEMORY=512M".into()))
        );
        assert_eq!(s.schedule, Schedule::Random(7));
        assert_eq!(s.kernel_timeout, None, "0: no limit");
        assert_eq!(s.kernel_engine, Some(KernelEngine::Interp));
        assert_eq!(s.kernel_threads, Some(3));
        assert_eq!(s.trace, Some(PathBuf::from("/tmp/t.jsonl")));
        assert!(s.problems.is_empty(), "{:?}", s.problems);
        for (name, engine) in [("jit", KernelEngine::Jit), ("tiered", KernelEngine::Tiered)] {
            let s = with(&[("CUMOCK_KERNEL_ENGINE", name)]);
            assert_eq!(s.kernel_engine, Some(engine));
        }
    }

    #[test]
    fn bad_values_keep_the_default_and_say_why() {
        let s = with(&[
            ("CUMOCK_DEVICES", "two"),
            ("CUMOCK_DEVICE_MEMORY", "lots"),
            ("CUMOCK_SCHEDULE", "soon"),
            ("CUMOCK_KERNEL_TIMEOUT", "-1"),
            ("CUMOCK_KERNEL_ENGINE", "gpu"),
            ("CUMOCK_KERNEL_STEP_LIMIT", "many"),
            ("CUMOCK_KERNEL_THREADS", "0"),
        ]);
        assert_eq!(s.devices, Err("CUMOCK_DEVICES=two is not a number".into()));
        assert_eq!(s.device_memory, None);
        assert_eq!(s.schedule, Schedule::Eager);
        assert_eq!(s.kernel_timeout, Some(Duration::from_secs(300)));
        assert_eq!(
            (s.kernel_engine, s.kernel_step_limit, s.kernel_threads),
            (None, None, None)
        );
        assert_eq!(s.problems.len(), 6, "{:?}", s.problems);
        for (p, var) in s.problems.iter().zip([
            "CUMOCK_DEVICE_MEMORY=\"lots\" is not a size",
            "CUMOCK_SCHEDULE=\"soon\" is not eager",
            "CUMOCK_KERNEL_THREADS=\"0\"",
            "CUMOCK_KERNEL_TIMEOUT=\"-1\"",
            "CUMOCK_KERNEL_STEP_LIMIT=\"many\"",
            "CUMOCK_KERNEL_ENGINE=\"gpu\"",
        ]) {
            assert!(p.starts_with(var), "{p}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("512MiB"), Some(512 << 20));
        assert_eq!(parse_size(" 3k "), Some(3 << 10));
        assert_eq!(parse_size("1T"), Some(1 << 40));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("100B"), Some(100));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("99999999999T"), None, "overflow");
    }

    #[test]
    fn schedules() {
        assert_eq!(Schedule::parse("eager"), Ok(Schedule::Eager));
        assert_eq!(Schedule::parse(" lazy "), Ok(Schedule::Lazy));
        assert_eq!(Schedule::parse("random: 9"), Ok(Schedule::Random(9)));
        assert!(Schedule::parse("random:x").is_err());
    }
}
