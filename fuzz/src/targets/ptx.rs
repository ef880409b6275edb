//! PTX text: parsed by `Module::parse`; what parses runs, every kernel, in a small launch
//! over a small memory, with a step limit.

use crate::mutate;
use crate::signature;
use cumock_ptx::{run as launch, Access, Fault, HostSpan, Launch, Memory, Module};
use std::cell::UnsafeCell;
use std::sync::OnceLock;

pub fn dict() -> &'static [Vec<u8>] {
    static D: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    D.get_or_init(|| mutate::parse_dict(include_str!("../../dict/ptx.dict")))
}

pub fn mutate(data: &mut Vec<u8>, rng: &mut fastrand::Rng, pool: &[Vec<u8>]) {
    mutate::text(data, rng, pool, dict());
}

/// Device memory over a few host buffers at fixed addresses, read-only or read-write;
/// anything else faults.
pub struct SmallMemory {
    regions: Vec<Region>,
}

/// Base address, bytes, writable.
type Region = (u64, Box<[UnsafeCell<u8>]>, bool);

// Safety: the executor reaches the buffers only through atomics (Memory's contract).
unsafe impl Sync for SmallMemory {}

// Safety: spans point into boxed buffers that live as long as the memory and never move.
unsafe impl Memory for SmallMemory {
    fn translate(&self, addr: u64, len: u64, access: Access) -> Result<HostSpan, Fault> {
        for (base, data, writable) in &self.regions {
            let size = data.len() as u64;
            if addr >= *base && addr - base < size {
                if len > size - (addr - base) {
                    return Err(Fault {
                        message: format!("{len} bytes at {addr:#x} run past {base:#x}"),
                    });
                }
                if access != Access::Read && !writable {
                    return Err(Fault {
                        message: format!("{base:#x} is read-only"),
                    });
                }
                return Ok(HostSpan {
                    base: *base,
                    len: size,
                    host: data.as_ptr() as *mut u8,
                    writable: *writable,
                });
            }
        }
        Err(Fault {
            message: format!("no memory at {addr:#x}"),
        })
    }
}

impl SmallMemory {
    pub fn new() -> Self {
        SmallMemory {
            regions: Vec::new(),
        }
    }

    /// How many buffers are mapped.
    pub fn regions(&self) -> usize {
        self.regions.len()
    }

    /// The bytes of buffer `i` (in mapping order), read between launches.
    pub fn contents(&self, i: usize) -> Vec<u8> {
        self.regions[i]
            .1
            .iter()
            // Safety: `&self` outside a launch: no executor thread holds a span of it.
            .map(|c| unsafe { *c.get() })
            .collect()
    }

    pub fn map(&mut self, bytes: &[u8], writable: bool) -> u64 {
        let base = 0x7f00_0000_0000u64 + (self.regions.len() as u64) * (1 << 32);
        let data = bytes.iter().map(|b| UnsafeCell::new(*b)).collect();
        self.regions.push((base, data, writable));
        base
    }
}

impl Default for SmallMemory {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs every kernel of a module with small launches; the signature says how each ended.
pub fn run_module(m: &Module) -> u64 {
    // What a driver would refuse to launch or place is not the executor's to run here.
    let globals_bytes: u64 = m.globals.iter().map(|g| g.init.len() as u64).sum();
    if globals_bytes > 1 << 20 {
        return signature(&["large globals"]);
    }
    let mut mem = SmallMemory::new();
    let a = mem.map(&[0x5a; 64 << 10], true);
    let b = mem.map(&[0x11; 64 << 10], true);
    let c = mem.map(&[0x22; 4096], false);
    let globals: Vec<u64> = m.globals.iter().map(|g| mem.map(&g.init, true)).collect();
    let mut sig = m.kernels.len() as u64;
    for (k, kernel) in m.kernels.iter().enumerate() {
        let size = kernel
            .params
            .iter()
            .map(|p| u64::from(p.offset) + u64::from(p.size))
            .max()
            .unwrap_or(0);
        if size > 4096 {
            sig = sig.rotate_left(5) ^ 1;
            continue;
        }
        let mut params = vec![0u8; size as usize];
        for (i, p) in kernel.params.iter().enumerate() {
            let v: u64 = [a, b, 64, c][i % 4];
            let n = p.size.min(8) as usize;
            let at = p.offset as usize;
            params[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
        let block =
            kernel
                .reqntid
                .unwrap_or([64.min(kernel.max_threads_per_block.unwrap_or(64)), 1, 1]);
        let threads = block.iter().map(|d| u64::from(*d)).product::<u64>();
        if threads == 0 || threads > 1024 {
            // The mock's launch refuses these before the executor sees them.
            sig = sig.rotate_left(5) ^ 2;
            continue;
        }
        let l = Launch {
            grid: [2, 1, 1],
            block,
            dynamic_shared_bytes: 1024,
            params: &params,
            globals: &globals,
            device_ordinal: 0,
            sm_count: 132,
            sm_ids: None,
            host_threads: 1,
            step_limit: Some(20_000),
            // The step limit bounds a mutant; the clock is a second guard.
            time_limit: Some(std::time::Duration::from_secs(5)),
            engine: cumock_ptx::Engine::default(),
            cooperative: false,
            cluster: None,
            stack_bytes: 1024,
            heap: None,
            device_runtime: None,
            current_graph_exec: 0,
        };
        let end = match launch(m, k, &l, &mem) {
            Ok(_) => "ok".to_string(),
            Err(f) => {
                if crate::verbose() {
                    eprintln!("kernel {}: {f:?}", kernel.name);
                }
                format!("{:?}", f.kind)
            }
        };
        sig = sig.rotate_left(7) ^ signature(&[&end]);
    }
    sig
}

pub fn run(data: &[u8]) -> u64 {
    let src = String::from_utf8_lossy(data);
    match Module::parse(&src) {
        Ok(m) => run_module(&m),
        Err(e) => {
            if crate::verbose() {
                eprintln!("{e}");
            }
            signature(&[&format!("{:?}", e.kind), &e.message])
        }
    }
}
