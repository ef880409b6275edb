//! Call sites: where the program made a thing or broke a rule, captured as return
//! addresses when it happens and symbolised only when reported (valgrind's manner).

/// The most frames kept of a stack: the mock's own (a dozen or so in a release build,
/// up to thirty in a debug one, where the generated conversion and the files-by-noun
/// forwarding add frames) and the program's innermost ones; each frame walked costs
/// about 0.2 µs (15 frames in `cumock bench`: 3.5 µs), and a walk stops at the stack's
/// end.
const MAX_FRAMES: usize = 64;
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
        let python = if super::settings().leaks || super::settings().misuse {
            crate::python_frames::frames()
        } else {
            Vec::new()
        };
        Self::native_with(python)
    }

    /// As [`capture`](Self::capture), under a lock of the mock's: Python frames only if
    /// the thread holds the GIL already.
    pub fn capture_locked() -> Self {
        let python = if super::settings().leaks || super::settings().misuse {
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
