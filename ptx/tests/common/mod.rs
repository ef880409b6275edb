//! Test support: nvcc from the registry packages (ci/install-nvcc.sh), outputs cached
//! under target/ptx-test-cache, and a device memory over host buffers with access rights.
#![allow(dead_code)]

pub mod images;
pub mod isa_table;
pub mod mutate;

use std::cell::UnsafeCell;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use cumock_ptx::{Access, Fault, HostSpan, Launch, Memory};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The CUDA toolkit root (bin/nvcc): ci/install-nvcc.sh installs it once.
pub fn toolkit() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let out = Command::new(repo_root().join("ci/install-nvcc.sh"))
            .output()
            .expect("run ci/install-nvcc.sh");
        assert!(
            out.status.success(),
            "ci/install-nvcc.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}

/// Compiles CUDA source with nvcc; `args` choose the output (`-ptx`, `-fatbin`...).
/// Cached by source and arguments, so re-runs cost nothing.
pub fn nvcc(source: &str, args: &[&str]) -> Vec<u8> {
    let mut h = DefaultHasher::new();
    source.hash(&mut h);
    args.hash(&mut h);
    let key = format!("{:016x}", h.finish());
    let dir = repo_root().join("target/ptx-test-cache");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{key}.out"));
    if let Ok(b) = std::fs::read(&out) {
        return b;
    }
    let src = dir.join(format!("{key}.cu"));
    std::fs::write(&src, source).unwrap();
    static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!("{key}.{}.{seq}.tmp", std::process::id()));
    let st = Command::new(toolkit().join("bin/nvcc"))
        .args(args)
        .arg(&src)
        .arg("-o")
        .arg(&tmp)
        .output()
        .expect("run nvcc");
    assert!(
        st.status.success(),
        "nvcc {args:?} failed:\n{}",
        String::from_utf8_lossy(&st.stderr)
    );
    std::fs::rename(&tmp, &out).unwrap();
    std::fs::read(&out).unwrap()
}

pub fn ptx(source: &str) -> String {
    String::from_utf8(nvcc(source, &["-ptx", "-arch=compute_90", "-O3"])).unwrap()
}

/// A corpus file's PTX: `-arch=compute_90`, or what its first line names
/// (`// corpus-arch: compute_90a`), as ci/gpu-corpus.sh compiles it.
pub fn corpus_ptx(src: &str) -> String {
    let arch = src
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// corpus-arch:"))
        .map(str::trim)
        .unwrap_or("compute_90");
    assert!(
        arch.starts_with("compute_")
            && arch.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
        "corpus-arch: {arch:?} is not a virtual architecture"
    );
    String::from_utf8(nvcc(src, &["-ptx", &format!("-arch={arch}"), "-O3"])).unwrap()
}

/// Device memory for tests: regions at fixed device addresses, each backed by a host
/// buffer, readable or read-write; anything else faults.
pub struct TestMemory {
    regions: Vec<Region>,
}

struct Region {
    base: u64,
    data: Box<[UnsafeCell<u8>]>,
    writable: bool,
}

// Safety: the executor reaches the buffers only through atomics (see Memory's contract);
// the test reads them after the launch.
unsafe impl Sync for TestMemory {}

// Safety: spans point into boxed buffers that live as long as the TestMemory and never move.
unsafe impl Memory for TestMemory {
    fn translate(&self, addr: u64, len: u64, access: Access) -> Result<HostSpan, Fault> {
        for r in &self.regions {
            let size = r.data.len() as u64;
            if addr >= r.base && addr < r.base + size {
                if addr + len > r.base + size {
                    return Err(Fault {
                        message: format!(
                            "{len} bytes at {addr:#x} run past the region at {:#x}",
                            r.base
                        ),
                    });
                }
                if access != Access::Read && !r.writable {
                    return Err(Fault {
                        message: format!("region at {:#x} is read-only", r.base),
                    });
                }
                return Ok(HostSpan {
                    base: r.base,
                    len: size,
                    host: r.data.as_ptr() as *mut u8,
                    writable: r.writable,
                });
            }
        }
        Err(Fault {
            message: format!("no mapping at {addr:#x}"),
        })
    }
}

impl Default for TestMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl TestMemory {
    pub fn new() -> Self {
        TestMemory {
            regions: Vec::new(),
        }
    }

    /// Maps `bytes` at the next free device address (1 TiB apart, 64 KiB aligned).
    pub fn map(&mut self, bytes: &[u8], writable: bool) -> u64 {
        let base = 0x7f00_0000_0000u64 + (self.regions.len() as u64) * (1 << 40);
        let data: Box<[UnsafeCell<u8>]> = bytes.iter().map(|b| UnsafeCell::new(*b)).collect();
        self.regions.push(Region {
            base,
            data,
            writable,
        });
        base
    }

    /// Maps a module's variables, each at its full size, their initialisers with the
    /// variables' addresses written in (`Global::initial_bytes`): `Launch::globals`.
    pub fn map_globals(&mut self, m: &cumock_ptx::Module) -> Vec<u64> {
        // `map` places region k at a fixed address: known before the bytes are.
        let first = self.regions.len() as u64;
        let addrs: Vec<u64> = (0..m.globals.len() as u64)
            .map(|k| 0x7f00_0000_0000u64 + (first + k) * (1 << 40))
            .collect();
        for g in &m.globals {
            let mut bytes = g.initial_bytes(&addrs);
            bytes.resize(g.size as usize, 0);
            self.map(&bytes, true);
        }
        addrs
    }

    pub fn read(&self, base: u64) -> Vec<u8> {
        let r = self
            .regions
            .iter()
            .find(|r| r.base == base)
            .expect("region");
        // Safety: no launch is running; the cells are plain bytes.
        r.data.iter().map(|c| unsafe { *c.get() }).collect()
    }
}

pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn to_f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn to_u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Kernel parameters laid out per the kernel's declaration, from 8-byte values.
pub fn params(k: &cumock_ptx::Kernel, vals: &[u64]) -> Vec<u8> {
    assert_eq!(
        k.params.len(),
        vals.len(),
        "kernel {} takes {} params",
        k.name,
        k.params.len()
    );
    let size = k
        .params
        .iter()
        .map(|p| p.offset + p.size)
        .max()
        .unwrap_or(0) as usize;
    let mut b = vec![0u8; size];
    for (p, v) in k.params.iter().zip(vals) {
        let n = p.size.min(8) as usize;
        b[p.offset as usize..p.offset as usize + n].copy_from_slice(&v.to_le_bytes()[..n]);
    }
    b
}

pub fn launch<'a>(grid: u32, block: u32, params: &'a [u8]) -> Launch<'a> {
    Launch {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes: 0,
        params,
        globals: &[],
        device_ordinal: 0,
        sm_count: 132,
        sm_ids: None,
        host_threads: 2,
        step_limit: Some(1 << 24),
        time_limit: None,
        engine: cumock_ptx::Engine::default(),
        cooperative: false,
        cluster: None,
        stack_bytes: 1024,
        heap: None,
        device_runtime: None,
        current_graph_exec: 0,
    }
}

/// Runs `body` in a child process of this test binary (only the test named `test`), with
/// at most `data_limit` bytes of private memory (RLIMIT_DATA: heap and anonymous
/// mappings, what a runaway allocation uses) and `deadline` to finish: a regression to
/// an endless loop or an unbounded allocation fails the test instead of hanging CI or
/// waking the host's OOM killer. Returns the child's stderr.
pub fn guarded(
    test: &str,
    data_limit: u64,
    deadline: std::time::Duration,
    body: impl FnOnce(),
) -> String {
    use std::os::unix::process::CommandExt;
    const CHILD: &str = "CUMOCK_GUARDED_TEST";
    if std::env::var(CHILD).as_deref() == Ok(test) {
        body();
        // The child's work ends here: what the caller checks of stderr is the parent's.
        std::process::exit(0);
    }
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, test)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // Safety: setrlimit is async-signal-safe, and the closure touches nothing else.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: data_limit,
                rlim_max: data_limit,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let mut child = cmd.spawn().expect("spawning the guarded test");
    let stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut s);
        s
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("waiting for the guarded test") {
            break st;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{test}: still running after {deadline:?} (a hang, or a runaway loop)");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let err = reader.join().unwrap_or_default();
    assert!(
        status.success(),
        "{test}: the guarded child failed ({status}; over {data_limit} bytes of memory \
         shows as an allocation failure or abort):\n{err}"
    );
    err
}

/// The generator of ptx/corpus/runner.c, word for word.
pub fn corpus_input(kernel: &str, n: usize) -> Vec<u32> {
    const SPECIAL: [u32; 40] = [
        0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fa00001,
        0x7fffffff, 0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x3f800000,
        0xbf800000, 0x3f000000, 0x4f000000, 0xcf000000, 0x5f000000, 0x4b000001, 0x3fc00000,
        0x40200000, 0xbfc00000, 0x477fe000, 0x477ff000, 0x33800000, 0xffffffff, 0x0000001f,
        0x00000020, 0x00000021, 0x0000003f, 0x00000040, 0x7fffffff, 0x80000001, 0x0000ffff,
        0x00008000, 0x000000ff, 0x00000080, 0x40490fdb, 0x3eaaaaab,
    ];
    let mut x = kernel
        .bytes()
        .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619))
        | 1;
    let mut step = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    (0..n)
        .map(|_| {
            let r = step();
            let y = step();
            if r & 3 == 0 {
                SPECIAL[(y % SPECIAL.len() as u32) as usize]
            } else {
                y
            }
        })
        .collect()
}
