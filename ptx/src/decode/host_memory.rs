//! What a kernel's code says about its use of memory the host may share, for the mock's
//! ordering-bug reports: whether it may signal the host through memory
//! (`Kernel::may_signal_host`), and which of its parameters it may store through
//! (`Kernel::params_stored_through`). Both read the syntax tree once, at load.

use std::collections::{HashMap, HashSet};

use crate::parse::{Ast, FuncAst, InstAst, Opnd, Stmt};

/// The functions with an instruction that may signal the host through memory, by name.
pub(super) fn functions_signalling_host(ast: &Ast) -> HashSet<&str> {
    let defined: HashSet<&str> = ast.funcs.iter().map(|f| f.name.as_str()).collect();
    ast.funcs
        .iter()
        .filter(|f| insts(f).any(|i| signals_host(i, &defined)))
        .map(|f| f.name.as_str())
        .collect()
}

fn insts(f: &FuncAst) -> impl Iterator<Item = &InstAst> {
    f.body.iter().flatten().filter_map(|s| match s {
        Stmt::Inst(i) => Some(i),
        _ => None,
    })
}

fn signals_host(i: &InstAst, defined: &HashSet<&str>) -> bool {
    let has = |m: &str| i.mods.iter().any(|x| x == m);
    match i.opcode.as_str() {
        "ld" | "st" => {
            let strong = ["volatile", "relaxed", "acquire", "release", "mmio"]
                .iter()
                .any(|m| has(m));
            // Shared, local, parameter and constant memory are never the host's.
            let private = i
                .mods
                .iter()
                .any(|m| m == "local" || m == "param" || m == "const" || m.starts_with("shared"));
            strong && !private
        }
        "fence" | "membar" => has("sys"),
        // A call through a register may reach any function of the module.
        "call" => !i
            .ops
            .iter()
            .find_map(|o| match o {
                Opnd::Name(n) => Some(defined.contains(n.as_str())),
                _ => None,
            })
            .unwrap_or(false),
        _ => false,
    }
}

/// The kernel's parameters (indices) whose values an address it stores through, or
/// updates atomically, may derive from: a flow-insensitive taint of registers from
/// `ld.param` through every instruction that computes a register from others (a value
/// loaded through a tainted address is tainted too: pointer chasing). What reaches memory
/// only through a call, a tensor map or a texture is not followed: the answer may miss a
/// parameter, never name one the kernel cannot store through by its own code.
pub(super) fn params_stored_through(f: &FuncAst) -> Vec<usize> {
    let index: HashMap<&str, usize> = f
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();
    let mut taint: HashMap<&str, u64> = HashMap::new();
    let mut written = 0u64;
    // Each pass may carry taint one more step along a chain of registers; the bits only
    // grow, so this ends (at most a pass per register, in practice two or three).
    loop {
        let mut changed = false;
        for i in insts(f) {
            // The operand holding the address the instruction writes through, if any, and
            // whether its first operand is a register it defines.
            let store = i.opcode == "wmma" && i.mods.iter().any(|m| m == "store");
            let (written_at, defines) = match i.opcode.as_str() {
                "st" | "red" | "stmatrix" | "multimem" | "cp" => (Some(0), false),
                _ if store => (Some(0), false),
                "atom" => (Some(1), true),
                // Calls and control flow define nothing the analysis follows.
                "call" | "bra" | "ret" | "exit" | "bar" | "barrier" => continue,
                _ => (None, true),
            };
            if i.ops.is_empty() {
                continue;
            }
            let taint_of = |n: &str| {
                index
                    .get(n)
                    .map_or(0, |&p| if p < 64 { 1u64 << p } else { 0 })
                    | taint.get(n).copied().unwrap_or(0)
            };
            let first = usize::from(defines);
            let mut bits = 0u64;
            for o in &i.ops[first..] {
                names(o, &mut |n, _| bits |= taint_of(n));
            }
            if let Some(at) = written_at.and_then(|k| i.ops.get(k)) {
                let mut stored = 0u64;
                names(at, &mut |n, in_address| {
                    if in_address {
                        stored |= taint_of(n);
                    }
                });
                if stored & !written != 0 {
                    written |= stored;
                    changed = true;
                }
            }
            if defines {
                names(&i.ops[0], &mut |n, _| {
                    let t = taint.entry(n).or_insert(0);
                    if bits & !*t != 0 {
                        *t |= bits;
                        changed = true;
                    }
                });
            }
        }
        if !changed {
            break;
        }
    }
    (0..f.params.len().min(64))
        .filter(|p| written & (1 << p) != 0)
        .collect()
}

/// Every name an operand holds, and whether it is inside an address (`[...]`).
fn names<'a>(o: &'a Opnd, f: &mut impl FnMut(&'a str, bool)) {
    match o {
        Opnd::Name(n) | Opnd::Not(n) | Opnd::Neg(n) | Opnd::SymOff(n, _) => {
            f(crate::decode::split_selector(n).0, false)
        }
        Opnd::Addr(Some(n), _) => f(n.as_str(), true),
        Opnd::Vector(v) | Opnd::List(v) => v.iter().for_each(|o| names(o, f)),
        Opnd::Pipe(a, b) => {
            names(a, f);
            names(b, f);
        }
        Opnd::Image(n, s, c) => {
            f(n.as_str(), false);
            if let Some(s) = s {
                f(s.as_str(), false);
            }
            names(c, f);
        }
        // Only initialisers hold these; no instruction does.
        Opnd::AddrOf { .. } => {}
        Opnd::Addr(None, _) | Opnd::Int(_) | Opnd::F32(_) | Opnd::F64(_) | Opnd::Sink => {}
    }
}
