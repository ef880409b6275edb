//! What calls need at run time: each function's entry, parameters and frame, and which
//! calls may re-enter their caller (recursion, direct or through function pointers).
//!
//! Every function has its own registers and local memory at fixed places (no frame
//! pointer), so a call saves nothing, unless the callee may call the caller again before
//! returning: then the caller's registers, predicates and local memory are saved at the
//! call and restored at the return (`executor/calls.rs`). That happens exactly when caller
//! and callee are in one strongly connected component of the call graph, where an
//! indirect call is an edge to every function whose address the module takes.

use std::collections::HashSet;

use super::{Op, Program};
use crate::parse::{Ast, FuncAst, Opnd, Stmt};

#[derive(Debug, Clone)]
pub struct FuncRt {
    pub name: String,
    pub kernel: bool,
    pub entry: u32,
    /// One past its last instruction.
    pub end: u32,
    /// (offset in local memory, bytes) of each `.param`, and of each return value.
    pub params: Vec<(u32, u32)>,
    pub rets: Vec<(u32, u32)>,
    /// Its registers and predicates (index ranges), and its local memory: the
    /// parameters' and return values' range, and its body's.
    pub regs: (u32, u32),
    pub preds: (u32, u32),
    pub locals: [(u32, u32); 2],
    /// The local memory its `.local` variables take (its depot, which a GPU keeps on the
    /// stack): a recursive activation has its own copy (`executor/calls.rs`).
    pub depot: (u32, u32),
    /// Its strongly connected component in the call graph.
    pub scc: u32,
    /// It may be active twice at once (its component has a cycle).
    pub recursive: bool,
    /// It launches kernels on the device, or calls a function that does.
    pub launches_on_device: bool,
    /// It launches device graphs (`cudaGraphLaunch`), or calls a function that does.
    pub launches_graphs: bool,
}

impl FuncRt {
    pub(super) fn new(
        f: &FuncAst,
        params: &[(u32, u32)],
        rets: &[(u32, u32)],
        entry: u32,
        end: u32,
    ) -> FuncRt {
        let ends = params.iter().chain(rets).map(|&(o, n)| (o, o + n));
        let lo = ends.clone().map(|e| e.0).min().unwrap_or(0);
        let hi = ends.map(|e| e.1).max().unwrap_or(0);
        FuncRt {
            name: f.name.clone(),
            kernel: f.entry,
            entry,
            end,
            params: params.to_vec(),
            rets: rets.to_vec(),
            regs: (0, 0),
            preds: (0, 0),
            locals: [(lo, hi), (0, 0)],
            depot: (0, 0),
            scc: 0,
            recursive: false,
            launches_on_device: false,
            launches_graphs: false,
        }
    }

    pub(super) fn set_frame(
        &mut self,
        regs: (u32, u32),
        preds: (u32, u32),
        body_local: (u32, u32),
        depot: (u32, u32),
    ) {
        self.regs = regs;
        self.preds = preds;
        self.locals[1] = body_local;
        self.depot = if depot.0 < depot.1 { depot } else { (0, 0) };
    }

    /// Bytes of its depot.
    pub fn depot_bytes(&self) -> u32 {
        (self.depot.1 - self.depot.0).next_multiple_of(16)
    }

    /// Bytes of call stack one of its activations takes, as a GPU counts against
    /// CU_LIMIT_STACK_SIZE: a return address and saved registers (16 bytes; ptxas keeps
    /// parameters in registers) and its `.local` depot.
    pub fn stack_cost(&self) -> u64 {
        16 + u64::from(self.depot_bytes())
    }
}

/// Marks every function calling (directly or not, along `edges`) a function marked.
fn reach_callers(edges: &[Vec<u32>], marked: &mut [bool]) {
    let mut grew = true;
    while grew {
        grew = false;
        for k in 0..marked.len() {
            if !marked[k] && edges[k].iter().any(|&c| marked[c as usize]) {
                marked[k] = true;
                grew = true;
            }
        }
    }
}

/// Computes each function's component and marks the calls that must save their caller.
/// `index` maps a function's name to its index in `prog.funcs` (functions with a body).
pub(super) fn mark_recursion(ast: &Ast, prog: &mut Program, index: impl Fn(&str) -> Option<u32>) {
    let n = prog.funcs.len();
    let mut edges: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut indirect_callers = Vec::new();
    let mut taken: HashSet<u32> = HashSet::new();
    let declared: HashSet<&str> = ast.funcs.iter().map(|f| f.name.as_str()).collect();
    // Functions launching kernels on the device themselves (the device runtime's launch
    // pair), then every function reaching one.
    let mut launching = vec![false; n];
    let mut graphing = vec![false; n];
    for f in &ast.funcs {
        let (Some(body), Some(me)) = (&f.body, index(&f.name)) else {
            continue;
        };
        for s in body {
            let Stmt::Inst(i) = s else { continue };
            if i.opcode == "call" {
                if let Some(Opnd::Name(c)) = i.ops.iter().find(|o| matches!(o, Opnd::Name(_))) {
                    match index(c) {
                        Some(k) => edges[me as usize].push(k),
                        // A body-less callee (the driver's malloc, vprintf) is a leaf.
                        None if declared.contains(c.as_str()) => {
                            launching[me as usize] |= crate::devrt::launches_kernels(c);
                            graphing[me as usize] |= crate::devrt::launches_graphs(c);
                        }
                        // A register: an indirect call.
                        None => indirect_callers.push(me),
                    }
                }
            } else {
                for o in &i.ops {
                    if let Opnd::Name(c) | Opnd::SymOff(c, _) = o {
                        if let Some(k) = index(c) {
                            taken.insert(k);
                        }
                    }
                }
            }
        }
    }
    // Addresses in variables' initialisers (tables of function pointers).
    for v in &ast.vars {
        for o in &v.init {
            if let Some(k) = match o {
                Opnd::Name(n) => index(n),
                _ => None,
            } {
                taken.insert(k);
            }
        }
    }
    let mut taken: Vec<u32> = taken.into_iter().collect();
    taken.sort_unstable();
    for me in indirect_callers {
        edges[me as usize].extend(&taken);
    }
    reach_callers(&edges, &mut launching);
    reach_callers(&edges, &mut graphing);
    let scc = components(&edges);
    let mut members = vec![0u32; n];
    for &c in &scc {
        members[c as usize] += 1;
    }
    for (k, f) in prog.funcs.iter_mut().enumerate() {
        f.scc = scc[k];
        f.recursive = members[scc[k] as usize] > 1 || edges[k].contains(&(k as u32));
        f.launches_on_device = launching[k];
        f.launches_graphs = graphing[k];
    }
    // Per-thread local memory for recursive activations' depots (`executor/calls.rs`).
    prog.recursive_depots = prog
        .funcs
        .iter()
        .any(|f| f.recursive && f.depot_bytes() > 0);
    let funcs = &prog.funcs;
    for (me, f) in funcs.iter().enumerate() {
        for inst in &mut prog.insts[f.entry as usize..f.end as usize] {
            match &mut inst.op {
                Op::Call { callee, save, .. } => {
                    let same = funcs.get(*callee as usize).is_some_and(|c| c.scc == f.scc);
                    *save = (same && !f.kernel).then_some(me as u32);
                }
                Op::CallIndirect { caller, .. } => {
                    *caller = (!f.kernel).then_some(me as u32);
                }
                _ => {}
            }
        }
    }
}

/// Tarjan's strongly connected components, with a stack of its own (a chain of 100,000
/// functions must not overflow the loading thread's stack): a component id per node.
fn components(edges: &[Vec<u32>]) -> Vec<u32> {
    let n = edges.len();
    const UNSEEN: u32 = u32::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![UNSEEN; n];
    let mut stack: Vec<u32> = Vec::new();
    let (mut next_index, mut next_comp) = (0u32, 0u32);
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // Each frame: a node and the position of its next edge.
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root as u32);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut e)) = path.last_mut() {
            if let Some(&w) = edges[v].get(*e) {
                *e += 1;
                let w = w as usize;
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w as u32);
                    on_stack[w] = true;
                    path.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            path.pop();
            if let Some(&(u, _)) = path.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    comp[w as usize] = next_comp;
                    if w as usize == v {
                        break;
                    }
                }
                next_comp += 1;
            }
        }
    }
    comp
}

#[cfg(test)]
mod tests {
    use super::components;

    #[test]
    fn cycles_share_a_component_and_chains_do_not() {
        // 0 -> 1 -> 2 -> 1, 2 -> 3, 4 -> 4
        let c = components(&[vec![1], vec![2], vec![1, 3], vec![], vec![4]]);
        assert_eq!(c[1], c[2]);
        assert_ne!(c[0], c[1]);
        assert_ne!(c[3], c[2]);
        assert_ne!(c[4], c[0]);
    }
}
