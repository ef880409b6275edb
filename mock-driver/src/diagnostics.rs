//! Diagnostics for allocator authors, all off unless an environment variable asks:
//!
//! | variable | what it does |
//! |---|---|
//! | `CUMOCK_TRACE=FILE` | every driver call as a JSON line: function, arguments, result, thread, time |
//! | `CUMOCK_LEAKS=1` | at exit, what leaked: reservations, handles, mappings, exported fds, stream-ordered memory, memory pools |
//! | `CUMOCK_MISUSE=1` | a message for each call that breaks a rule, naming the call and the rule |
//! | `CUMOCK_FAULT=SPEC` | make calls fail on purpose (see `FaultPlan::parse`) |
//! | `CUMOCK_STRICT=1` | misuse and leaks make the process exit with status 86 |

use crate::model::error::{CuError, Severity};
use crate::model::ids::AllocationId;
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use cumock_trace::schema::{self, Kind, Param};
use cumock_trace::{Event, Fields, HandleNames, Value};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// The exit status of a strict run that found misuse or leaks.
pub const STRICT_EXIT_STATUS: i32 = 86;

struct Settings {
    trace: Option<Mutex<Trace>>,
    leaks: bool,
    misuse: bool,
    strict: bool,
    faults: Option<Mutex<Vec<FaultPlan>>>,
    start: Instant,
}

fn settings() -> &'static Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    S.get_or_init(|| {
        let on = |k: &str| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0");
        let trace = std::env::var("CUMOCK_TRACE").ok().and_then(|path| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| eprintln!("cumock: CUMOCK_TRACE={path}: {e}; not tracing"))
                .ok()
                .map(|file| {
                    Mutex::new(Trace {
                        file,
                        names: HandleNames::default(),
                    })
                })
        });
        // Specs are separated by commas; those for CUDA runtime functions (`cuda...`)
        // belong to cumock's runtime, which reads the same variable.
        let faults = std::env::var("CUMOCK_FAULT").ok().and_then(|all| {
            let plans: Result<Vec<FaultPlan>, String> = all
                .split(',')
                .map(str::trim)
                .filter(|spec| !spec.is_empty() && !spec.starts_with("cuda"))
                .map(|spec| FaultPlan::parse(spec).map_err(|e| format!("{spec}: {e}")))
                .collect();
            match plans {
                Ok(p) if p.is_empty() => None,
                Ok(p) => Some(Mutex::new(p)),
                Err(e) => {
                    eprintln!("cumock: CUMOCK_FAULT={all}: {e}; no faults injected");
                    None
                }
            }
        });
        let s = Settings {
            trace,
            leaks: on("CUMOCK_LEAKS") || on("CUMOCK_STRICT"),
            misuse: on("CUMOCK_MISUSE") || on("CUMOCK_STRICT"),
            strict: on("CUMOCK_STRICT"),
            faults,
            start: Instant::now(),
        };
        if s.leaks || s.strict {
            // Safety: registering plain extern "C" functions with no captured state.
            unsafe {
                libc::atexit(at_exit);
                libc::pthread_atfork(
                    Some(before_fork),
                    Some(after_fork_parent),
                    Some(after_fork_child),
                );
            }
        }
        s
    })
}

pub fn misuse_enabled() -> bool {
    settings().misuse
}

static MISUSES: AtomicU64 = AtomicU64::new(0);
static SEQ: AtomicU64 = AtomicU64::new(0);

/// Counts a misuse the boundary has just printed, and says under it where the program
/// made the call.
pub fn note_misuse(_name: &str, e: &CuError) {
    if e.severity == Severity::WouldCrash || settings().misuse {
        MISUSES.fetch_add(1, Ordering::Relaxed);
        if !e.message.is_empty() {
            eprint!("{}", CallSite::capture().show());
        }
    }
}

/// A kernel's fault: always said, as compute-sanitizer would say it, since on a GPU the
/// program learns only an error code at its next synchronisation.
pub fn kernel_fault(message: &str) {
    eprintln!("cumock: {message}");
    if settings().misuse {
        MISUSES.fetch_add(1, Ordering::Relaxed);
    }
}

/// A hazard that is not an error on the mock but is on a real driver: printed and
/// counted as misuse when misuse messages are on.
pub fn warn(name: &str, message: &str) {
    if settings().misuse {
        eprint!(
            "cumock: {name}: warning: {message}\n{}",
            CallSite::capture().show()
        );
        MISUSES.fetch_add(1, Ordering::Relaxed);
    }
}

/// An ordering bug (model/ordering.rs), its message already naming both operations and
/// their call sites: printed and counted as misuse.
pub fn ordering_bug(message: &str) {
    eprint!("{message}");
    MISUSES.fetch_add(1, Ordering::Relaxed);
}

/// The trace file, and the names given to handles so far (under one lock, so that
/// names follow the order of the lines).
struct Trace {
    file: std::fs::File,
    names: HandleNames,
}

/// One trace line for a finished call, in the event form the pass-through recorder
/// also writes and `cumock trace2case` reads (`cumock_trace::Event`).
pub fn after_call(name: &str, code: u32, args: &[(&str, &dyn Debug)]) {
    let s = settings();
    let Some(trace) = &s.trace else { return };
    let raw: Vec<(&str, Raw)> = args
        .iter()
        .map(|(k, v)| (*k, Raw::parse(&format!("{v:?}"))))
        .collect();
    let mut t = trace.lock();
    let (args, out) = traced_args(name, code == 0, &raw, &mut t.names);
    let event = Event {
        seq: SEQ.fetch_add(1, Ordering::Relaxed),
        function: name.to_owned(),
        args,
        out,
        result: cumock_trace::result_name(code),
        thread: thread_id(),
        t_us: s.start.elapsed().as_micros() as u64,
    };
    let _ = writeln!(t.file, "{}", event.to_line());
}

/// An argument as the boundary passed it: an integer, or a pointer's address (raw
/// pointers print in hex, integers in decimal).
#[derive(Debug, Clone, PartialEq)]
enum Raw {
    Unsigned(u64),
    Signed(i64),
    Pointer(u64),
    Other(String),
}

impl Raw {
    fn parse(s: &str) -> Self {
        if let Some(h) = s.strip_prefix("0x") {
            if let Ok(p) = u64::from_str_radix(h, 16) {
                return Raw::Pointer(p);
            }
        }
        if let Ok(u) = s.parse() {
            return Raw::Unsigned(u);
        }
        if let Ok(i) = s.parse() {
            return Raw::Signed(i);
        }
        Raw::Other(s.to_owned())
    }

    fn bits(&self) -> u64 {
        match self {
            Raw::Unsigned(u) | Raw::Pointer(u) => *u,
            Raw::Signed(i) => *i as u64,
            Raw::Other(_) => 0,
        }
    }
}

/// The arguments typed by `cumock_trace::schema`, matched to the export's parameters by
/// position; an export the schema does not list (or lists with another arity) keeps its
/// own parameter names, integers as numbers and pointers as addresses.
fn traced_args(
    name: &str,
    ok: bool,
    raw: &[(&str, Raw)],
    names: &mut HandleNames,
) -> (Fields, Fields) {
    let (mut args, mut out) = (Fields::new(), Fields::new());
    let params = schema::params(name).filter(|p| p.len() == raw.len());
    let Some(params) = params else {
        for (k, r) in raw {
            args.push(
                k,
                match r {
                    Raw::Unsigned(u) => Value::from(*u),
                    Raw::Signed(i) => Value::from(*i),
                    Raw::Pointer(0) => Value::Null,
                    Raw::Pointer(p) => cumock_trace::address(*p),
                    Raw::Other(s) => Value::from(s.as_str()),
                },
            );
        }
        return (args, out);
    };
    let count = params
        .iter()
        .zip(raw)
        .find(|(p, _)| p.name == "count")
        .map(|(_, (_, r))| r.bits());
    for (p, (_, r)) in params.iter().zip(raw) {
        if p.out {
            // Only a call that succeeded has written through its out-pointers.
            if let (true, Raw::Pointer(at)) = (ok, r) {
                if let Some(v) = read_out(p, *at, names) {
                    out.push(p.name, v);
                }
            }
            continue;
        }
        let v = match (p.kind, r) {
            (Kind::Str | Kind::Prop | Kind::Location | Kind::AccessDescs, Raw::Pointer(at))
                if *at != 0 =>
            {
                read_in(p.kind, *at, count.unwrap_or(0))
                    .unwrap_or_else(|| cumock_trace::address(*at))
            }
            (kind, Raw::Signed(i)) => schema::signed(kind, *i, names),
            (kind, r) => schema::scalar(kind, r.bits(), names),
        };
        args.push(p.name, v);
    }
    (args, out)
}

/// A value the export wrote through an out-pointer.
fn read_out(p: &Param, at: u64, names: &mut HandleNames) -> Option<Value> {
    Some(match p.kind {
        Kind::Str | Kind::Prop => read_in(p.kind, at, 0)?,
        kind if p.bytes == 4 => schema::signed(kind, i64::from(peek_value::<i32>(at)?), names),
        kind => schema::scalar(kind, peek_value::<u64>(at)?, names),
    })
}

/// A string or struct the program passed (`count` of them for descriptors); `None`
/// where its memory cannot be read.
fn read_in(kind: Kind, at: u64, count: u64) -> Option<Value> {
    Some(match kind {
        Kind::Str => {
            let bytes = peek(at, 512)?;
            let end = bytes.iter().position(|b| *b == 0)?;
            Value::from(String::from_utf8_lossy(&bytes[..end]).into_owned())
        }
        Kind::Prop => {
            let p = peek_value::<CUmemAllocationProp>(at)?;
            schema::prop(
                p.type_,
                p.location.type_,
                p.location.id,
                p.requested_handle_types,
                p.alloc_flags.compression_type,
            )
        }
        Kind::Location => {
            let l = peek_value::<CUmemLocation>(at)?;
            schema::location(l.type_, l.id)
        }
        Kind::AccessDescs if count <= 64 => {
            let size = std::mem::size_of::<CUmemAccessDesc>() as u64;
            Value::Array(
                (0..count)
                    .map(|i| {
                        let d = peek_value::<CUmemAccessDesc>(at + i * size)?;
                        Some(schema::access_desc(
                            d.location.type_,
                            d.location.id,
                            d.flags,
                        ))
                    })
                    .collect::<Option<_>>()?,
            )
        }
        _ => return None,
    })
}

/// Reads up to `len` bytes of the program's memory at `at` without trusting the
/// address: process_vm_readv on this very process fails (EFAULT) where a plain read of
/// a bad pointer would fault, so a program passing garbage gets a trace, not a crash.
fn peek(at: u64, len: usize) -> Option<Vec<u8>> {
    if at == 0 {
        return None;
    }
    let mut buf = vec![0u8; len];
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: at as *mut libc::c_void,
        iov_len: len,
    };
    // Safety: the kernel writes at most `len` bytes into our buffer, and checks the
    // remote range itself.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n <= 0 {
        return None;
    }
    buf.truncate(n as usize);
    Some(buf)
}

/// A plain C value (an integer, or one of cuda.h's structs of integers and pointers,
/// for which every bit pattern is a value) from the program's memory.
fn peek_value<T: Copy>(at: u64) -> Option<T> {
    let bytes = peek(at, std::mem::size_of::<T>())?;
    // Safety: `bytes` holds size_of::<T>() bytes (checked), and T is plain old data.
    (bytes.len() == std::mem::size_of::<T>())
        .then(|| unsafe { bytes.as_ptr().cast::<T>().read_unaligned() })
}

fn thread_id() -> i64 {
    // Safety: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

/// The code to fail this call with, if a planned fault hits it.
/// Whether calls are traced or may be failed on purpose: when neither, the boundary
/// skips both hooks with this one test (most programs run with neither).
pub fn watching_calls() -> bool {
    let s = settings();
    s.trace.is_some() || s.faults.is_some()
}

pub fn injected_fault(name: &str) -> Option<u32> {
    let plans = settings().faults.as_ref()?;
    // Every plan counts the call, so that each one's numbering is its own function's.
    plans
        .lock()
        .iter_mut()
        .fold(None, |hit, p| p.hit(name).or(hit))
}

/// A planned failure: `FUNC:N:ERROR` fails the Nth call of FUNC (1-based);
/// `FUNC:every=K:ERROR` every Kth; `FUNC:rate=P:seed=S:ERROR` at random with probability
/// P from seed S. `*` as FUNC means any function. ERROR is a CUresult name.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    function: String,
    when: When,
    code: u32,
    calls: u64,
    rng: u64,
}

#[derive(Debug, Clone, PartialEq)]
enum When {
    Nth(u64),
    Every(u64),
    Rate(f64),
}

impl FaultPlan {
    pub fn parse(spec: &str) -> Result<Self, String> {
        let parts: Vec<&str> = spec.split(':').collect();
        if parts.len() < 3 {
            return Err(
                "expected FUNC:N:ERROR, FUNC:every=K:ERROR or FUNC:rate=P:seed=S:ERROR".into(),
            );
        }
        let function = parts[0].to_owned();
        let code_name = parts[parts.len() - 1];
        let code = cumock_abi::result_code(code_name)
            .ok_or_else(|| format!("{code_name} is not a CUresult name"))?;
        let mut when = None;
        let mut seed = 1u64;
        for p in &parts[1..parts.len() - 1] {
            if let Some(v) = p.strip_prefix("every=") {
                when = Some(When::Every(
                    v.parse()
                        .map_err(|_| format!("every={v} is not a number"))?,
                ));
            } else if let Some(v) = p.strip_prefix("rate=") {
                let r: f64 = v.parse().map_err(|_| format!("rate={v} is not a number"))?;
                if !(0.0..=1.0).contains(&r) {
                    return Err(format!("rate={v} is not between 0 and 1"));
                }
                when = Some(When::Rate(r));
            } else if let Some(v) = p.strip_prefix("seed=") {
                seed = v.parse().map_err(|_| format!("seed={v} is not a number"))?;
            } else {
                when = Some(When::Nth(
                    p.parse().map_err(|_| format!("{p} is not a call number"))?,
                ));
            }
        }
        let when = when.ok_or("no call number, every= or rate= given")?;
        if matches!(when, When::Nth(0) | When::Every(0)) {
            return Err("calls are counted from 1".into());
        }
        Ok(Self {
            function,
            when,
            code,
            calls: 0,
            rng: seed.max(1),
        })
    }

    pub fn hit(&mut self, name: &str) -> Option<u32> {
        if self.function != "*" && self.function != name {
            return None;
        }
        self.calls += 1;
        let fail = match self.when {
            When::Nth(n) => self.calls == n,
            When::Every(k) => self.calls.is_multiple_of(k),
            When::Rate(p) => {
                // xorshift64: reproducible from the seed, no dependency needed for it.
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                ((self.rng >> 11) as f64 / (1u64 << 53) as f64) < p
            }
        };
        fail.then_some(self.code)
    }
}

/// An fd the program was given by cuMemExportToShareableHandle: still open at exit if
/// the same number names the same file (device and inode) then.
struct ExportedFd {
    fd: i32,
    identity: (u64, u64),
    /// Where the program exported it, when leak checking is on.
    site: Option<CallSite>,
}

static EXPORTED: Mutex<Vec<ExportedFd>> = Mutex::new(Vec::new());

pub fn note_exported_fd(fd: &OwnedFd) {
    if let Some(identity) = identity(fd.as_raw_fd()) {
        EXPORTED.lock().push(ExportedFd {
            fd: fd.as_raw_fd(),
            identity,
            site: settings().leaks.then(CallSite::capture),
        });
    }
}

fn identity(fd: i32) -> Option<(u64, u64)> {
    // Safety: fstat fills a plain struct; a closed fd makes it fail, which we report.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

/// What a call site is kept for, so that a leak report can say where the program made
/// what it never gave back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Made {
    /// cuMemAddressReserve or cuMemAlloc, by base address.
    Reservation,
    /// cuMemCreate or cuMemImportFromShareableHandle, by the handle the program holds.
    Allocation,
    /// cuMemMap, by start address.
    Mapping,
    /// cuMemPoolCreate, by pool handle.
    Pool,
    /// cuMemAllocAsync or cuMemAllocFromPoolAsync, by address.
    PoolAllocation,
}

/// Where the program made each live thing, while leak checking is on, with the order it
/// was noted in. Entries of things since freed are dropped in batches (`prune_origins`),
/// so the table stays about as large as what is live, without a hook on every freeing
/// call. This lock is never held together with the model's (fork safety, see
/// `before_fork`).
static ORIGINS: Mutex<BTreeMap<(Made, u64), (u64, CallSite)>> = Mutex::new(BTreeMap::new());
static ORIGINS_SEQ: AtomicU64 = AtomicU64::new(0);
static ORIGINS_PRUNE_AT: AtomicU64 = AtomicU64::new(4096);

/// cuMemAlloc memory the driver allocated for itself (each context's device heap, for
/// kernels' malloc): not the program's to free, so never reported as a leak.
static DRIVER_OWNED: Mutex<std::collections::BTreeSet<u64>> =
    Mutex::new(std::collections::BTreeSet::new());

/// Marks (or, when it is freed, unmarks) the allocation at `base` as the driver's own.
pub fn driver_owned(base: u64, owned: bool) {
    let mut set = DRIVER_OWNED.lock();
    if owned {
        set.insert(base);
    } else {
        set.remove(&base);
    }
}

/// Handles carry a tag in their high bits; the model keys allocations by the low ones.
fn origin_key(what: Made, key: u64) -> (Made, u64) {
    match what {
        Made::Allocation => (what, AllocationId::from_handle(key).serial()),
        _ => (what, key),
    }
}

/// Notes where the program made `key`, when leak checking is on; returns `key`, so a call
/// site reads `out(ptr, created(Made::Reservation, d.address_reserve(..)?))`.
pub fn created(what: Made, key: u64) -> u64 {
    if !settings().leaks {
        return key;
    }
    let site = CallSite::capture();
    let seq = ORIGINS_SEQ.fetch_add(1, Ordering::Relaxed);
    let len = {
        let mut origins = ORIGINS.lock();
        origins.insert(origin_key(what, key), (seq, site));
        origins.len() as u64
    };
    if len >= ORIGINS_PRUNE_AT.load(Ordering::Relaxed) {
        prune_origins();
    }
    key
}

/// Drops the origins of what is no longer live: the model's keys are copied first, then
/// the table is pruned, never holding both locks. What was noted after the copy stays.
fn prune_origins() {
    let Ok(d) = crate::model::driver() else {
        return;
    };
    let before = ORIGINS_SEQ.load(Ordering::Relaxed);
    let live: std::collections::HashSet<(Made, u64)> = d.with_state(|vmm, pools| {
        let reservations = vmm.reservations().map(|(k, _)| (Made::Reservation, k));
        let allocations = vmm
            .allocations()
            .map(|(k, _)| (Made::Allocation, k.serial()));
        let mappings = vmm.mappings().map(|m| (Made::Mapping, m.start));
        let pool_list = pools.created().into_iter().map(|k| (Made::Pool, k));
        let blocks = pools.blocks().map(|(k, _)| (Made::PoolAllocation, k));
        reservations
            .chain(allocations)
            .chain(mappings)
            .chain(pool_list)
            .chain(blocks)
            .collect()
    });
    let mut origins = ORIGINS.lock();
    origins.retain(|key, (seq, _)| *seq >= before || live.contains(key));
    ORIGINS_PRUNE_AT.store((origins.len() as u64 * 2).max(4096), Ordering::Relaxed);
}

/// fork() while another thread holds the origins' lock would leave the child with a lock
/// no thread releases: it is taken across the fork, as the model's is.
extern "C" fn before_fork() {
    std::mem::forget(ORIGINS.lock());
}

extern "C" fn after_fork_parent() {
    // Safety: before_fork took the lock in this thread and forgot its guard.
    unsafe { ORIGINS.force_unlock() };
}

extern "C" fn after_fork_child() {
    // A thread parked on the lock in the parent does not exist here: the lock is reset.
    // Safety: this thread is the only one in the child, and it holds the lock (taken in
    // before_fork), so nothing else reads the lock's state while it is written.
    unsafe {
        let raw = ORIGINS.raw() as *const parking_lot::RawMutex as *mut parking_lot::RawMutex;
        raw.write(<parking_lot::RawMutex as parking_lot::lock_api::RawMutex>::INIT);
    }
}

/// The most frames kept of a stack: the mock's own (a dozen or so, more in a debug
/// build) and the program's innermost ones; each frame walked costs about 0.2 µs
/// (15 frames in `cumock bench`: 3.5 µs).
const MAX_FRAMES: usize = 32;
/// The most of the program's frames shown under one leak or misuse message.
const SHOWN_FRAMES: usize = 12;

/// A native call stack as return addresses, captured when the program makes something
/// and symbolised only if it is reported: capturing is a walk of the stack (a few
/// microseconds), symbolising reads debug information (milliseconds).
#[derive(Debug, Clone)]
pub struct CallSite {
    ips: Box<[usize]>,
    /// In a Python program, with leak or misuse checking on: the Python frames
    /// (`python_frames`), which say more than the interpreter's native ones.
    python: Box<[String]>,
}

impl CallSite {
    /// The calling thread's stack. Only where the mock holds none of its locks: in a
    /// Python program it may take the GIL (see `python_frames`).
    pub fn capture() -> Self {
        let python = if settings().leaks || settings().misuse {
            crate::python_frames::frames()
        } else {
            Vec::new()
        };
        Self::native_with(python)
    }

    /// As [`capture`](Self::capture), under a lock of the mock's: Python frames only if
    /// the thread holds the GIL already.
    pub fn capture_locked() -> Self {
        let python = if settings().leaks || settings().misuse {
            crate::python_frames::frames_if_gil_held()
        } else {
            Vec::new()
        };
        Self::native_with(python)
    }

    /// The instruction at `pc` alone (a load the trap on host memory saw: `host_trap`),
    /// shown as the line that holds it.
    pub fn at_instruction(pc: usize) -> Self {
        // This is no return address: `frames` looks one byte back from one, and
        // `backtrace::resolve` one more (it takes every address it is given for one), so
        // two bytes on is the instruction itself (a fault at a function's first byte
        // would otherwise resolve to the function before it).
        Self {
            ips: Box::new([pc.wrapping_add(2)]),
            python: Box::new([]),
        }
    }

    fn native_with(python: Vec<String>) -> Self {
        let mut ips = Vec::with_capacity(MAX_FRAMES);
        // Safety: the unsynchronised walk is not thread-safe only where the platform's
        // unwinder is not; on Linux, libgcc's _Unwind_Backtrace is. The synchronised one
        // takes a global lock, which a fork() from another thread could leave held in
        // the child.
        unsafe {
            backtrace::trace_unsynchronized(|frame| {
                ips.push(frame.ip() as usize);
                ips.len() < MAX_FRAMES
            })
        };
        Self {
            ips: ips.into_boxed_slice(),
            python: python.into_boxed_slice(),
        }
    }

    /// The program's frames, innermost first, as `function (file:line)`: the mock's own
    /// frames are dropped, and the stack ends at `main`.
    pub fn frames(&self) -> Vec<String> {
        if !self.python.is_empty() {
            return self.python.iter().take(SHOWN_FRAMES).cloned().collect();
        }
        let own = module_of(own_address as fn() as usize).map(|(base, _)| base);
        let mut out = Vec::new();
        for &ip in self.ips.iter() {
            let module = module_of(ip);
            if module.is_some() && module.as_ref().map(|(base, _)| *base) == own {
                continue;
            }
            // A CUDA runtime's frames (cumock's or NVIDIA's) are not the program's: the
            // call site is where the program called it.
            if module.as_ref().is_some_and(|(_, path)| {
                std::path::Path::new(path)
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("libcudart"))
            }) {
                continue;
            }
            // A return address points after its call; one byte back lies in the call,
            // whose line is the one to show.
            let at = ip.saturating_sub(1);
            let mut reached_main = false;
            let before = out.len();
            backtrace::resolve(at as *mut std::ffi::c_void, |sym| {
                let name = sym.name().map(|n| format!("{n:#}"));
                reached_main |= name.as_deref() == Some("main");
                let name = name.unwrap_or_else(|| "???".into());
                let place = match (sym.filename(), sym.lineno()) {
                    (Some(f), Some(l)) => format!("{}:{l}", f.display()),
                    _ => module
                        .as_ref()
                        .map(|(_, path)| path.clone())
                        .unwrap_or_else(|| "?".into()),
                };
                out.push(format!("{name} ({place})"));
            });
            if out.len() == before {
                let path = module.map(|(_, p)| p).unwrap_or_else(|| "?".into());
                out.push(format!("{ip:#x} ({path})"));
            }
            if reached_main || out.len() >= SHOWN_FRAMES {
                break;
            }
        }
        out.truncate(SHOWN_FRAMES);
        out
    }

    /// The frames as lines under a message, in valgrind's manner.
    pub fn show(&self) -> String {
        self.frames()
            .iter()
            .enumerate()
            .map(|(i, f)| format!("cumock:       {} {f}\n", if i == 0 { "at" } else { "by" }))
            .collect()
    }
}

/// The file of the loaded object whose code called into the mock (the first frame of the
/// stack outside the mock), if any: who asked, for messages that depend on it.
pub fn caller_object() -> Option<String> {
    let own = module_of(own_address as fn() as usize).map(|(base, _)| base);
    CallSite::native_with(Vec::new())
        .ips
        .iter()
        .filter_map(|&ip| module_of(ip))
        .find(|(base, _)| Some(*base) != own)
        .map(|(_, path)| path)
}

/// Any function of this library, to find which loaded object is the mock.
fn own_address() {}

/// The loaded object holding `ip`: its base address and file.
fn module_of(ip: usize) -> Option<(usize, String)> {
    // Safety: dladdr only reads the loader's tables; a zeroed Dl_info is a valid output.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(ip as *const std::ffi::c_void, &mut info) } == 0 {
        return None;
    }
    let path = if info.dli_fname.is_null() {
        String::new()
    } else {
        // Safety: dladdr gives a NUL-terminated name owned by the loader.
        unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned()
    };
    Some((info.dli_fbase as usize, path))
}

/// One thing that leaked, and where the program made it when that was recorded.
pub struct Leak {
    pub what: String,
    pub site: Option<CallSite>,
}

/// What leaked, one line each; empty when nothing did.
pub fn leak_report() -> Vec<String> {
    leaks().into_iter().map(|l| l.what).collect()
}

/// What leaked, with where each was made.
pub fn leaks() -> Vec<Leak> {
    let mut out: Vec<(String, Option<(Made, u64)>)> = Vec::new();
    // Read before the model's lock is taken (the set's lock is taken under no other).
    let driver_owned = DRIVER_OWNED.lock().clone();
    if let Ok(d) = crate::model::driver() {
        d.with_state(|vmm, pools| {
        for (base, r) in vmm.reservations() {
            let what = match r.kind {
                crate::model::vmm::ReservationKind::Vmm => format!(
                    "reservation {base:#x}+{:#x} never freed (cuMemAddressFree)",
                    r.size
                ),
                crate::model::vmm::ReservationKind::Alloc { .. } if driver_owned.contains(&base) => {
                    continue
                }
                crate::model::vmm::ReservationKind::Alloc { requested, .. } => format!(
                    "cuMemAlloc memory {base:#x} ({requested} bytes) never freed (cuMemFree)"
                ),
                // A pool's own address space: what leaks is its allocations (below).
                crate::model::vmm::ReservationKind::Pool { .. }
                | crate::model::vmm::ReservationKind::Graph => continue,
            };
            out.push((what, Some((Made::Reservation, base))));
        }
        for m in vmm.mappings() {
            let is_alloc = vmm
                .reservation(m.reservation)
                .is_some_and(|r| r.kind != crate::model::vmm::ReservationKind::Vmm);
            if !is_alloc {
                out.push((
                    format!(
                        "mapping {:#x}+{:#x} never unmapped (cuMemUnmap)",
                        m.start, m.size
                    ),
                    Some((Made::Mapping, m.start)),
                ));
            }
        }
        for (ptr, b) in pools.blocks() {
            out.push((
                format!(
                    "stream-ordered memory {ptr:#x} ({} bytes, pool {:#x}) never freed (cuMemFreeAsync)",
                    b.requested, b.pool
                ),
                Some((Made::PoolAllocation, ptr)),
            ));
        }
        for pool in pools.created() {
            out.push((
                format!("memory pool {pool:#x} never destroyed (cuMemPoolDestroy)"),
                Some((Made::Pool, pool)),
            ));
        }
        let mut handles: Vec<_> = vmm
            .allocations()
            .filter(|(_, a)| a.user_refs > 0)
            .collect();
        handles.sort_by_key(|(id, _)| id.serial());
        for (id, a) in handles {
            out.push((format!(
                "allocation handle #{} ({:#x} bytes) never released: {} reference(s) left (cuMemRelease)",
                id.serial(), a.size, a.user_refs
            ), Some((Made::Allocation, id.serial()))));
        }
        });
    }
    // The model's lock is released before the origins' is taken: `created` takes them
    // in the other order.
    let origins = ORIGINS.lock();
    let mut leaks: Vec<Leak> = out
        .into_iter()
        .map(|(what, key)| Leak {
            what,
            site: key.and_then(|k| origins.get(&k).map(|(_, site)| site.clone())),
        })
        .collect();
    drop(origins);
    for e in EXPORTED.lock().iter() {
        if identity(e.fd) == Some(e.identity) {
            leaks.push(Leak {
                what: format!("exported fd {} never closed", e.fd),
                site: e.site.clone(),
            });
        }
    }
    leaks
}

extern "C" fn at_exit() {
    let s = settings();
    let leaks = if s.leaks { leaks() } else { Vec::new() };
    if !leaks.is_empty() {
        eprintln!("cumock: leak report: {} leak(s)", leaks.len());
        for l in &leaks {
            let site = l.site.as_ref().map(CallSite::show).unwrap_or_default();
            eprint!("cumock:   {}\n{site}", l.what);
        }
    } else if s.leaks {
        eprintln!("cumock: leak report: nothing leaked");
    }
    let misuses = MISUSES.load(Ordering::Relaxed);
    if s.strict && (misuses > 0 || !leaks.is_empty()) {
        eprintln!(
            "cumock: strict mode: {misuses} misuse(s), {} leak(s); exiting with status {STRICT_EXIT_STATUS}",
            leaks.len()
        );
        // Safety: _exit ends the process at once; we are in an atexit handler already.
        unsafe { libc::_exit(STRICT_EXIT_STATUS) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_arguments_by_kind_and_outputs_after_success() {
        let mut names = HandleNames::default();
        let handle: u64 = 0xabc;
        let raw = [
            ("handle", Raw::Pointer(&handle as *const u64 as u64)),
            ("size", Raw::Unsigned(2 << 20)),
            ("prop", Raw::Pointer(0)),
            ("flags", Raw::Unsigned(0)),
        ];
        let (a, o) = traced_args("cuMemCreate", true, &raw, &mut names);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"size":2097152,"prop":null,"flags":0}"#
        );
        assert_eq!(o.get("handle").unwrap(), "handle#1");
        let (_, o) = traced_args("cuMemCreate", false, &raw, &mut names);
        assert!(o.is_empty(), "no outputs from a failed call");
        let raw = [
            ("ptr", Raw::parse("140737488355328")),
            ("size", Raw::parse("4096")),
            ("offset", Raw::parse("0")),
            ("handle", Raw::parse("2748")),
            ("flags", Raw::parse("0")),
        ];
        let (a, _) = traced_args("cuMemMap", true, &raw, &mut names);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"ptr":"0x800000000000","size":4096,"offset":0,"handle":"handle#1","flags":0}"#
        );
        // A `const char *` symbol is a string; the status it wrote, a number.
        let symbol = c"cuMemMap";
        let status: i32 = 1;
        let raw = [
            ("symbol", Raw::Pointer(symbol.as_ptr() as u64)),
            ("pfn", Raw::Pointer(0)),
            ("cudaVersion", Raw::Unsigned(13000)),
            ("flags", Raw::Unsigned(0)),
            ("symbolStatus", Raw::Pointer(&status as *const i32 as u64)),
        ];
        let (a, o) = traced_args("cuGetProcAddress_v2", true, &raw, &mut names);
        assert_eq!(a.get("symbol").unwrap(), "cuMemMap");
        assert_eq!(o.get("status").unwrap(), 1);
        // An export the schema does not list keeps its own names; pointers as addresses.
        let raw = [("symbol", Raw::Pointer(symbol.as_ptr() as u64))];
        let (a, _) = traced_args("cuModuleGetFunction", true, &raw, &mut names);
        assert!(a.get("symbol").unwrap().as_str().unwrap().starts_with("0x"));
        assert_eq!(Raw::parse("-1"), Raw::Signed(-1));
        // A pointer that cannot be read is traced as its address, never followed blindly.
        let raw = [
            ("handle", Raw::Pointer(0)),
            ("size", Raw::Unsigned(1)),
            ("prop", Raw::Pointer(0x10)),
            ("flags", Raw::Unsigned(0)),
        ];
        let (a, _) = traced_args("cuMemCreate", false, &raw, &mut names);
        assert_eq!(a.get("prop").unwrap(), "0x10");
    }

    #[test]
    fn nth_call_fails() {
        let mut p = FaultPlan::parse("cuMemCreate:3:CUDA_ERROR_OUT_OF_MEMORY").unwrap();
        let hits: Vec<_> = (0..5).map(|_| p.hit("cuMemCreate")).collect();
        assert_eq!(hits, vec![None, None, Some(2), None, None]);
        assert_eq!(p.hit("cuMemMap"), None);
    }

    #[test]
    fn rate_is_reproducible_from_the_seed() {
        let run = || {
            let mut p = FaultPlan::parse("*:rate=0.25:seed=7:CUDA_ERROR_UNKNOWN").unwrap();
            (0..1000).filter(|_| p.hit("cuMemMap").is_some()).count()
        };
        let n = run();
        assert_eq!(n, run());
        assert!((150..350).contains(&n), "{n} of 1000 at rate 0.25");
    }

    #[test]
    fn bad_specs_say_why() {
        assert!(FaultPlan::parse("cuMemCreate")
            .unwrap_err()
            .contains("expected"));
        assert!(FaultPlan::parse("cuMemCreate:1:NOPE")
            .unwrap_err()
            .contains("NOPE"));
        assert!(FaultPlan::parse("cuMemCreate:0:CUDA_ERROR_UNKNOWN").is_err());
        assert!(FaultPlan::parse("x:rate=2:CUDA_ERROR_UNKNOWN").is_err());
    }
}
