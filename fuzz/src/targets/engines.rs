//! The compiler's input (issue 22): PTX text mutated as for `ptx`; what parses runs every
//! kernel under both engines, the interpreter and the compiled code, in the same small
//! launch over fresh copies of the same memory, with a step limit and a time limit. A
//! finding is a panic, a hang, or any difference between the engines: the result (its
//! statistics, or the fault and its whole message) or a byte of memory afterwards.

use crate::mutate;
use crate::signature;
use crate::targets::ptx::{dict, SmallMemory};
use cumock_ptx::{run as launch, Engine, FaultKind, Launch, Module};

pub fn mutate(data: &mut Vec<u8>, rng: &mut fastrand::Rng, pool: &[Vec<u8>]) {
    mutate::text(data, rng, pool, dict());
}

/// How one engine ended one kernel: its result as text, and every buffer's bytes.
type Outcome = (Result<cumock_ptx::Stats, String>, Vec<Vec<u8>>);

fn one(m: &Module, k: usize, engine: Engine) -> Option<Outcome> {
    let kernel = &m.kernels[k];
    let mut mem = SmallMemory::new();
    let a = mem.map(&[0x5a; 16 << 10], true);
    let b = mem.map(&[0x11; 16 << 10], true);
    let c = mem.map(&[0x22; 4096], false);
    let globals: Vec<u64> = m.globals.iter().map(|g| mem.map(&g.init, true)).collect();
    let size = kernel
        .params
        .iter()
        .map(|p| u64::from(p.offset) + u64::from(p.size))
        .max()
        .unwrap_or(0);
    if size > 4096 {
        return None;
    }
    let mut params = vec![0u8; size as usize];
    for (i, p) in kernel.params.iter().enumerate() {
        let v: u64 = [a, b, 64, c, 7][i % 5];
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
        return None;
    }
    let l = Launch {
        grid: [2, 1, 1],
        block,
        dynamic_shared_bytes: 256,
        params: &params,
        globals: &globals,
        device_ordinal: 0,
        sm_count: 132,
        sm_ids: None,
        // One host thread: blocks in order, so atomics between blocks end alike.
        host_threads: 1,
        step_limit: Some(20_000),
        time_limit: Some(std::time::Duration::from_secs(5)),
        engine,
        cooperative: false,
        cluster: None,
        stack_bytes: 1024,
        heap: None,
        device_runtime: None,
        current_graph_exec: 0,
    };
    let r = launch(m, k, &l, &mem).map_err(|f| {
        if f.kind == FaultKind::TimeLimit {
            // How far a launch gets in its time depends on the machine, not the engine.
            "time limit".to_string()
        } else {
            f.to_string()
        }
    });
    let bytes = (0..mem.regions()).map(|i| mem.contents(i)).collect();
    Some((r, bytes))
}

pub fn run(data: &[u8]) -> u64 {
    let src = String::from_utf8_lossy(data);
    let m = match Module::parse(&src) {
        Ok(m) => m,
        Err(e) => return signature(&[&format!("{:?}", e.kind)]),
    };
    if m.globals.iter().map(|g| g.init.len() as u64).sum::<u64>() > 1 << 20 {
        return signature(&["large globals"]);
    }
    // The clocks read the host's time: the engines may see different values.
    let clocks = src.contains("%clock") || src.contains("%globaltimer");
    let mut sig = m.kernels.len() as u64;
    for k in 0..m.kernels.len() {
        let Some(interp) = one(&m, k, Engine::Interp) else {
            sig = sig.rotate_left(5) ^ 1;
            continue;
        };
        let jit = one(&m, k, Engine::Jit).expect("the same launch");
        let timed_out = [&interp.0, &jit.0]
            .iter()
            .any(|r| r.as_ref().err().is_some_and(|e| e == "time limit"));
        if !clocks && !timed_out {
            assert_eq!(
                interp.0, jit.0,
                "kernel {}: the engines end differently",
                m.kernels[k].name
            );
            if let Some(i) = (0..interp.1.len()).find(|&i| interp.1[i] != jit.1[i]) {
                let at = interp.1[i]
                    .iter()
                    .zip(&jit.1[i])
                    .position(|(x, y)| x != y)
                    .unwrap_or(0);
                panic!(
                    "kernel {}: buffer {i} differs at byte {at} ({:?})",
                    m.kernels[k].name, interp.0
                );
            }
        }
        if crate::verbose() {
            eprintln!("kernel {}: {:?}", m.kernels[k].name, interp.0);
        }
        let end = match &interp.0 {
            Ok(_) => "ok".to_string(),
            Err(e) => e.split(':').next().unwrap_or("").to_string(),
        };
        sig = sig.rotate_left(7) ^ signature(&[&end]);
    }
    sig
}
