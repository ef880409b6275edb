//! Runs the steps of one case against a loaded driver, in this process. The runner
//! starts one process a case (`cumock __case`), so a driver that crashes or hangs takes
//! only that case down. Each step's record is written as a JSON line as soon as it is
//! known, so a crash is placed at the step that caused it.
//!
//! The executor holds what the case has named (values, regions, handles, contexts);
//! what each operation does is in `ops/`, one module a noun.

use crate::case::{Case, Step};
use crate::driver::Api;
use crate::normalize;
use crate::ops::{self, Expr, Op, Ptr};
use crate::transcript::StepRecord;
use anyhow::{anyhow, bail, Context as _, Result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::io::Write;

/// What a name in a case stands for; it decides how the value is normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Address,
    Handle,
    Fd,
    Context,
    Stream,
    Event,
}

pub struct Exec<'a> {
    pub(crate) api: &'a Api,
    vars: HashMap<String, u64>,
    kinds: HashMap<String, Kind>,
    /// Named reservations and allocations: (name, base, size).
    pub(crate) regions: Vec<(String, u64, u64)>,
    pub(crate) handles: Vec<(u64, String)>,
    contexts: Vec<(u64, String)>,
    pub(crate) free_baseline: Option<u64>,
    /// The name the running step binds (`va` in `va = reserve 4g`).
    binding: Option<String>,
    case_path: std::path::PathBuf,
    process: Option<String>,
    sink: &'a mut dyn FnMut(&StepRecord),
}

/// The outcome of one step: a result name and outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Out {
    pub result: String,
    pub outputs: Vec<(String, String)>,
}

impl Out {
    /// A driver call's result, with no outputs.
    pub fn code(code: u32) -> Self {
        Self {
            result: code_name(code),
            outputs: Vec::new(),
        }
    }

    /// A driver call's result; its outputs are shown only when it succeeded.
    pub fn with(code: u32, outputs: Vec<(&str, String)>) -> Self {
        Self {
            result: code_name(code),
            outputs: if code == 0 {
                outputs
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect()
            } else {
                Vec::new()
            },
        }
    }

    /// A harness-only step (an fd opened, a byte read): `ok` and its outputs.
    pub fn harness(outputs: Vec<(&str, String)>) -> Self {
        Self {
            result: "ok".into(),
            outputs: outputs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        }
    }
}

fn code_name(code: u32) -> String {
    cumock_abi::result_name(code)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("CUresult({code})"))
}

/// Calls an entry point; one the driver does not export makes the step's result
/// `not-exported: NAME` (a fact about that driver), and the case goes on.
macro_rules! call {
    ($api:expr, $name:ident($($arg:expr),* $(,)?)) => {{
        let Some(f) = $api.$name else {
            return Ok($crate::case_steps::Out { result: concat!("not-exported: ", stringify!($name)).to_owned(), outputs: Vec::new() });
        };
        // Safety: the arguments match the signature in cuda.h; pointers are to live locals.
        unsafe { f($($arg),*) }
    }};
}
pub(crate) use call;

impl<'a> Exec<'a> {
    pub fn new(api: &'a Api, case: &Case, sink: &'a mut dyn FnMut(&StepRecord)) -> Self {
        Self {
            api,
            vars: HashMap::new(),
            kinds: HashMap::new(),
            regions: Vec::new(),
            handles: Vec::new(),
            contexts: Vec::new(),
            free_baseline: None,
            binding: None,
            case_path: case.path.clone(),
            process: None,
            sink,
        }
    }

    /// Runs steps in order. `Err` is a failure of the case or the harness, not of the
    /// driver: a driver's error code is data in the record.
    pub fn run(&mut self, steps: &[Step]) -> Result<()> {
        for step in steps {
            if let Op::Child(child) = &step.op {
                self.run_child(step.line, child)?;
                continue;
            }
            self.binding = step.bind.clone();
            let out = ops::run(&step.op, self).with_context(|| {
                format!(
                    "{}:{}: `{}`",
                    self.case_path.display(),
                    step.line,
                    step.source
                )
            })?;
            let rec = StepRecord {
                line: step.line,
                step: step.source.clone(),
                result: out.result,
                outputs: out.outputs,
                process: self.process.clone(),
            };
            (self.sink)(&rec);
        }
        Ok(())
    }

    /// Binds the running step's name, if it has one, to `value`.
    pub(crate) fn bind(&mut self, value: u64, kind: Kind) {
        let Some(name) = self.binding.clone() else {
            return;
        };
        self.vars.insert(name.clone(), value);
        self.kinds.insert(name.clone(), kind);
        match kind {
            Kind::Handle if value != 0 && !self.handles.iter().any(|(v, _)| *v == value) => {
                self.handles.push((value, name))
            }
            Kind::Context if value != 0 && !self.contexts.iter().any(|(v, _)| *v == value) => {
                self.contexts.push((value, name))
            }
            _ => {}
        }
    }

    /// Binds a new object's value. It may reuse the value of one that is gone (the real
    /// driver's handles and contexts are heap pointers): the value then takes the new
    /// object's name.
    pub(crate) fn bind_new(&mut self, value: u64, kind: Kind) {
        if self.binding.is_some() {
            self.handles.retain(|(v, _)| *v != value);
            self.contexts.retain(|(v, _)| *v != value);
        }
        self.bind(value, kind);
    }

    /// Names a reservation or allocation the running step made, for addresses in it.
    pub(crate) fn region(&mut self, base: u64, size: u64) {
        if let (Some(name), true) = (&self.binding, base != 0) {
            self.regions.push((name.clone(), base, size));
        }
    }

    /// The folder of the running case: files a case names (modules) are found there.
    pub(crate) fn case_dir(&self) -> &std::path::Path {
        self.case_path.parent().unwrap_or(std::path::Path::new("."))
    }

    pub(crate) fn eval(&self, e: &Expr) -> Result<u64> {
        crate::expr::eval(&e.text, &self.vars).map_err(|m| anyhow!("column {}: {m}", e.col))
    }

    pub(crate) fn eval_or(&self, e: &Option<Expr>, default: u64) -> Result<u64> {
        e.as_ref().map_or(Ok(default), |e| self.eval(e))
    }

    pub(crate) fn ptr(&self, p: &Ptr) -> Result<*mut c_void> {
        Ok(match p {
            Ptr::Null => std::ptr::null_mut(),
            Ptr::Expr(e) => self.eval(e)? as *mut c_void,
        })
    }

    pub(crate) fn addr(&self, v: u64) -> String {
        normalize::address(v, &self.regions)
    }

    pub(crate) fn ctx_name(&self, v: u64) -> String {
        normalize::context(v, &self.contexts)
    }

    /// Runs a `child { }` block in a second process that inherits the case's fds.
    fn run_child(&mut self, line: usize, _steps: &[Step]) -> Result<()> {
        let mut fds = Vec::new();
        for (name, kind) in &self.kinds {
            if *kind == Kind::Fd {
                let fd = self.vars[name] as i32;
                // Safety: clearing FD_CLOEXEC on an fd the case owns so the child inherits it.
                unsafe {
                    let f = libc::fcntl(fd, libc::F_GETFD);
                    if f >= 0 {
                        libc::fcntl(fd, libc::F_SETFD, f & !libc::FD_CLOEXEC);
                    }
                }
                fds.push((name.clone(), fd));
            }
        }
        let ints: HashMap<String, u64> = self
            .kinds
            .iter()
            .filter(|(_, k)| matches!(k, Kind::Fd | Kind::Int))
            .map(|(n, _)| (n.clone(), self.vars[n]))
            .collect();
        let exe = std::env::current_exe()?;
        let output = std::process::Command::new(exe)
            .args([
                "__child",
                "--driver",
                &self.api.path,
                "--line",
                &line.to_string(),
            ])
            .arg(&self.case_path)
            .env("CUMOCK_CHILD_VARS", serde_json::to_string(&ints)?)
            .stderr(std::process::Stdio::inherit())
            .output()
            .context("starting the child process")?;
        for l in String::from_utf8_lossy(&output.stdout).lines() {
            match serde_json::from_str::<crate::runner::Line>(l) {
                Ok(crate::runner::Line::Step(rec)) => (self.sink)(&rec),
                Ok(crate::runner::Line::End(crate::transcript::Outcome::HarnessError {
                    message,
                })) => bail!("in the child process: {message}"),
                _ => {}
            }
        }
        if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&output.status) {
            let rec = StepRecord {
                line,
                step: "child".into(),
                result: format!("crash: {}", crate::runner::signal_name(sig)),
                outputs: vec![],
                process: Some("child".into()),
            };
            (self.sink)(&rec);
        } else if !output.status.success() {
            bail!("the child process failed ({})", output.status);
        }
        Ok(())
    }

    /// For the child process: the parent's fds and integers, and records marked `child`.
    pub fn adopt(&mut self, vars: HashMap<String, u64>) {
        for (k, v) in vars {
            self.vars.insert(k.clone(), v);
            self.kinds.insert(k, Kind::Int);
        }
        self.process = Some("child".into());
    }
}

/// Writes each record as a JSON line on stdout, flushed, for the parent process.
pub fn stdout_sink() -> impl FnMut(&StepRecord) {
    |rec: &StepRecord| {
        let mut out = std::io::stdout().lock();
        let line = crate::runner::Line::Step(rec.clone());
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(&line).expect("records serialise")
        );
        let _ = out.flush();
    }
}
