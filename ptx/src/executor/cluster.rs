//! Thread-block clusters: the blocks of a cluster run together on one host thread,
//! taking turns as a cooperative launch's blocks do (`BlockState`s swapped into the
//! context), so that they can wait for each other and reach each other's shared memory.
//!
//! - Scheduling: a host thread takes a whole cluster, sets up all its blocks (shared
//!   memory zeroed, warps at the entry) before any instruction runs, then runs them in
//!   rank order, each until it finishes, yields after a slice of instructions, or can only
//!   poll (a `barrier.cluster.wait` or an mbarrier wait that the other blocks must
//!   complete). Different clusters run on different host threads, in parallel.
//! - Distributed shared memory: a `.shared::cluster` address is `(rank + 1) *
//!   CLUSTER_RANK_STRIDE` plus the offset (`mapa`), or an offset of the running block's
//!   own below the stride; generic addresses add `SHARED_WINDOW`. Every access is checked
//!   against the cluster's size and the block's shared bytes, and faults as a shared
//!   access does.
//! - A block that exits keeps its shared memory until its whole cluster has finished: the
//!   GPU requires a cluster barrier before a block exits whose memory others may still
//!   read, and the mock keeps the memory rather than fault a read the GPU may or may not
//!   serve (the safe choice; a missing barrier is not reported).
//! - `barrier.cluster`: arrivals count threads; a phase completes when every thread of
//!   the cluster has arrived or exited (PTX: exited threads no longer hold up a cluster
//!   barrier). A wait waits for the phase of the thread's last arrival.
//! - Deadlock: a pass over the cluster's blocks in which every block could only poll and
//!   nothing changed (no arrival at any barrier, no mbarrier changed), repeated as often as
//!   a block's own mbarrier deadlock takes, ends the launch in `FaultKind::Deadlock`.
//! - A cooperative launch with clusters: the cluster is the unit of scheduling. Every
//!   cluster of the grid is in flight at once (a grid sync needs all of them); a host
//!   thread takes a new cluster, else a parked one (`ParkedCluster`: its blocks and its
//!   barrier), runs it for a turn and parks it again. A turn is one pass over its blocks,
//!   and more passes while every block only polled its cluster's barrier or mbarriers
//!   (nothing outside the cluster can complete those, so the deadlock count goes on in
//!   one turn); a block spinning in a grid sync yields after a few reads of the grid
//!   workspace, which is not polling: the cluster goes back to the queue for the others,
//!   and a grid sync that can never complete ends at the launch's time limit.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{for_lanes, write, BlockCtx, BlockState, Fault, Loc, Warp, MBARRIER_IDLE_ROUNDS};
use crate::decode::{Dst, Src, Sreg};
use crate::{
    FaultKind, Kernel, Launch, CLUSTER_RANK_STRIDE, MAX_CLUSTER_BLOCKS, SHARED_WINDOW, WINDOW_SIZE,
};

/// A cluster's barrier (`barrier.cluster`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ClusterBarrier {
    /// Threads arrived in the current phase.
    arrived: u32,
    /// Of them, those that exited since.
    exited_arrived: u32,
    /// Phases completed.
    completed: u32,
    /// Arrivals and completions so far (deadlock detection).
    changes: u64,
}

/// The launch's cluster shape: the launch's, else the kernel's `.reqnctapercluster`, else
/// one block; checked against the grid and the largest cluster (the driver checks first,
/// with its error codes: this guards the executor's own callers).
pub(super) fn shape(launch: &Launch, k: &Kernel) -> Result<[u32; 3], String> {
    let shape = launch.cluster.or(k.required_cluster).unwrap_or([1, 1, 1]);
    if shape.contains(&0) {
        return Err(format!("a cluster shape of {shape:?}"));
    }
    if (0..3).any(|d| launch.grid[d] % shape[d] != 0) {
        return Err(format!(
            "the grid {:?} is not a whole number of clusters of {shape:?}",
            launch.grid
        ));
    }
    if blocks_in(shape) > MAX_CLUSTER_BLOCKS {
        return Err(format!(
            "a cluster of {} blocks, more than {MAX_CLUSTER_BLOCKS}",
            blocks_in(shape)
        ));
    }
    Ok(shape)
}

pub(super) fn blocks_in(shape: [u32; 3]) -> u32 {
    shape[0] * shape[1] * shape[2]
}

/// A cluster of a cooperative launch while other clusters have the host threads: what
/// `BlockCtx` holds of a running cluster, taken out and put back.
pub(super) struct ParkedCluster {
    blocks: Vec<BlockState>,
    bar: ClusterBarrier,
    /// Per rank, whether the block has finished.
    done: Vec<bool>,
}

impl BlockCtx<'_> {
    /// Runs cluster `c` (clusters numbered x first, as blocks are) to its end.
    pub(super) fn run_cluster(
        &mut self,
        c: u64,
        warps: &mut Vec<Warp>,
        k: &Kernel,
        shared_bytes: usize,
        stop: &AtomicBool,
    ) -> Result<(), Fault> {
        let mut done = self.begin_cluster(c, warps, k, shared_bytes)?;
        let result = self.run_cluster_blocks(warps, stop, &mut done, false);
        self.cluster_blocks.clear();
        result.map(|_| ())
    }

    /// Runs a turn of cluster `c` of a cooperative launch: a new cluster when `parked` is
    /// None, set up first. Returns None when the cluster finished (or the launch stops),
    /// else the cluster to park until its next turn.
    pub(super) fn run_cluster_turn(
        &mut self,
        c: u64,
        parked: Option<ParkedCluster>,
        warps: &mut Vec<Warp>,
        k: &Kernel,
        shared_bytes: usize,
        stop: &AtomicBool,
    ) -> Result<Option<ParkedCluster>, Fault> {
        let mut done = match parked {
            Some(p) => {
                self.cluster_blocks = p.blocks;
                self.cluster_bar = p.bar;
                p.done
            }
            None => self.begin_cluster(c, warps, k, shared_bytes)?,
        };
        let result = self.run_cluster_blocks(warps, stop, &mut done, true);
        let blocks = std::mem::take(&mut self.cluster_blocks);
        match result {
            Ok(false) => Ok(Some(ParkedCluster {
                blocks,
                bar: self.cluster_bar,
                done,
            })),
            Ok(true) => Ok(None),
            Err(f) => Err(f),
        }
    }

    /// Sets up cluster `c`: every block exists, at the kernel's entry, before any runs.
    /// Returns the blocks' done flags (none yet).
    fn begin_cluster(
        &mut self,
        c: u64,
        warps: &mut Vec<Warp>,
        k: &Kernel,
        shared_bytes: usize,
    ) -> Result<Vec<bool>, Fault> {
        let [sx, sy, sz] = self.cluster_shape;
        let [nx, ny, _] = [
            self.launch.grid[0] / sx,
            self.launch.grid[1] / sy,
            self.launch.grid[2] / sz,
        ];
        let cid = [
            (c % nx as u64) as u32,
            ((c / nx as u64) % ny as u64) as u32,
            (c / (nx as u64 * ny as u64)) as u32,
        ];
        let n = blocks_in(self.cluster_shape) as usize;
        self.cluster_bar = ClusterBarrier::default();
        self.cluster_blocks = (0..n as u32)
            .map(|r| {
                let local = [r % sx, (r / sx) % sy, r / (sx * sy)];
                let ctaid = [
                    cid[0] * sx + local[0],
                    cid[1] * sy + local[1],
                    cid[2] * sz + local[2],
                ];
                BlockState::new(ctaid, shared_bytes)
            })
            .collect();
        if let Some(detail) = self.past_deadline() {
            self.ctaid = self.cluster_blocks[0].ctaid;
            self.cluster_blocks.clear();
            return Err(self.block_fault(detail));
        }
        // Every block exists before any runs: a block may write another's shared memory
        // (after a cluster barrier) before that one would otherwise have started.
        for r in 0..n {
            let mut st = std::mem::take(&mut self.cluster_blocks[r]);
            self.swap_block(&mut st, warps);
            self.begin_block(warps, k);
            st.started = true;
            self.swap_block(&mut st, warps);
            self.cluster_blocks[r] = st;
        }
        Ok(vec![false; n])
    }

    /// Runs the cluster's blocks in turn until all are `done` (true), the launch stops
    /// (true), or, with `turn`, after the first pass in which some block did more than
    /// poll its cluster's barriers (false: the cluster gives its host thread to others).
    fn run_cluster_blocks(
        &mut self,
        warps: &mut Vec<Warp>,
        stop: &AtomicBool,
        done: &mut [bool],
        turn: bool,
    ) -> Result<bool, Fault> {
        let mut idle_passes = 0u32;
        while done.iter().any(|d| !d) {
            let before = (self.cluster_bar.changes, self.mbar_changes);
            let mut all_idle = true;
            let mut last = 0;
            for (r, finished) in done.iter_mut().enumerate() {
                if *finished {
                    continue;
                }
                last = r;
                let mut st = std::mem::take(&mut self.cluster_blocks[r]);
                self.swap_block(&mut st, warps);
                self.idle = false;
                self.resumed_at = self.instructions;
                // A fault is made while the block is swapped in: it names the block.
                let ran = self.resume_block(warps, stop);
                self.swap_block(&mut st, warps);
                self.cluster_blocks[r] = st;
                if ran? {
                    *finished = true;
                    all_idle = false;
                } else {
                    all_idle &= self.idle;
                }
                if stop.load(Ordering::Relaxed) {
                    return Ok(true);
                }
            }
            if !all_idle || (self.cluster_bar.changes, self.mbar_changes) != before {
                idle_passes = 0;
                if turn && !all_idle && done.iter().any(|d| !d) {
                    return Ok(false);
                }
                continue;
            }
            idle_passes += 1;
            if idle_passes >= MBARRIER_IDLE_ROUNDS {
                // The last block that ran polled last: the fault names it.
                let mut st = std::mem::take(&mut self.cluster_blocks[last]);
                self.swap_block(&mut st, warps);
                let f = self.wait_deadlock(warps);
                self.swap_block(&mut st, warps);
                self.cluster_blocks[last] = st;
                return Err(f);
            }
        }
        Ok(true)
    }

    /// The deadlock of a block whose lanes only poll: the last wait they polled.
    pub(super) fn wait_deadlock(&self, warps: &[Warp]) -> Fault {
        let (wi, lane, pc, at) = self.last_wait.unwrap_or((0, 0, 0, 0));
        let w = &warps[(wi as usize).min(warps.len() - 1)];
        let detail = if at == usize::MAX {
            self.cluster_deadlock()
        } else {
            self.mbar_deadlock(at)
        };
        self.fault(w, lane, pc, FaultKind::Deadlock, None, detail)
    }

    fn cluster_deadlock(&self) -> String {
        let total = self.nthreads * blocks_in(self.cluster_shape);
        format!(
            "cluster barrier: {} of {total} threads of the cluster arrived and {} exited; \
             the rest can never arrive (they exited, wait at a barrier, or wait for others)",
            self.cluster_bar.arrived,
            self.cluster_exited()
        )
    }

    /// This block's rank in its cluster (x first).
    fn cluster_rank(&self) -> u32 {
        let [sx, sy, _] = self.cluster_shape;
        let l = |d: usize| self.ctaid[d] % self.cluster_shape[d];
        l(0) + sx * (l(1) + sy * l(2))
    }

    pub(super) fn cluster_sreg(&self, s: Sreg) -> u64 {
        let shape = self.cluster_shape;
        (match s {
            Sreg::ClusterId(d) => self.ctaid[d as usize] / shape[d as usize],
            Sreg::Nclusterid(d) => self.launch.grid[d as usize] / shape[d as usize],
            Sreg::ClusterCtaid(d) => self.ctaid[d as usize] % shape[d as usize],
            Sreg::ClusterNctaid(d) => shape[d as usize],
            Sreg::ClusterCtarank => self.cluster_rank(),
            Sreg::ClusterNctarank => blocks_in(shape),
            Sreg::IsExplicitCluster => self.explicit_cluster as u32,
            _ => 0,
        }) as u64
    }

    /// Threads of the cluster that exited.
    fn cluster_exited(&self) -> u32 {
        self.exited_threads
            + self
                .cluster_blocks
                .iter()
                .map(|b| b.exited_threads)
                .sum::<u32>()
    }

    /// Marks `m`'s lanes exited; an exited thread no longer holds up the cluster barrier,
    /// and one that arrived in the current phase is counted once.
    pub(super) fn exit_lanes(&mut self, w: &mut Warp, m: u32) {
        w.exited |= m;
        self.exited_threads += m.count_ones();
        // Only while the cluster's barrier has arrivals (every exit of every kernel
        // comes here: a loop over the lanes would cost each one).
        if self.cluster_bar.arrived == 0 {
            return;
        }
        let pending = self.cluster_bar.completed.wrapping_add(1);
        for_lanes(m, |l| {
            if w.cluster_target[l] == pending {
                self.cluster_bar.exited_arrived += 1;
            }
        });
    }

    /// Completes the barrier's phase if every thread of the cluster arrived or exited.
    fn cluster_try_complete(&mut self) {
        let b = self.cluster_bar;
        if b.arrived == 0 {
            return;
        }
        let total = self.nthreads * blocks_in(self.cluster_shape);
        if b.arrived + self.cluster_exited() - b.exited_arrived >= total {
            self.cluster_bar = ClusterBarrier {
                arrived: 0,
                exited_arrived: 0,
                completed: b.completed.wrapping_add(1),
                changes: b.changes + 1,
            };
        }
    }

    /// `barrier.cluster.arrive`: each lane of `emask` waits, at its next wait, for the
    /// phase now pending.
    pub(super) fn cluster_arrive(&mut self, w: &mut Warp, emask: u32) {
        let target = self.cluster_bar.completed.wrapping_add(1);
        for_lanes(emask, |l| w.cluster_target[l] = target);
        self.cluster_bar.arrived += emask.count_ones();
        self.cluster_bar.changes += 1;
        self.cluster_try_complete();
    }

    /// The lanes of `emask` whose phase has not completed yet.
    pub(super) fn cluster_wait(&mut self, w: &Warp, emask: u32, pc: u32) -> u32 {
        self.cluster_try_complete();
        let completed = self.cluster_bar.completed;
        let mut incomplete = 0u32;
        // Phases are compared by distance, so the count may wrap.
        for_lanes(emask, |l| {
            if (w.cluster_target[l].wrapping_sub(completed) as i32) > 0 {
                incomplete |= 1 << l;
            }
        });
        if incomplete != 0 {
            self.last_wait = Some((w.id, incomplete.trailing_zeros(), pc, usize::MAX));
        }
        incomplete
    }

    /// `.shared::cluster` address `addr` at or above the stride: a block by rank.
    pub(super) fn locate_remote(
        &mut self,
        w: &mut Warp,
        addr: u64,
        size: u64,
        lane: u32,
        pc: u32,
    ) -> Result<Loc, Fault> {
        let rank = addr / CLUSTER_RANK_STRIDE - 1;
        let off = addr % CLUSTER_RANK_STRIDE;
        let n = blocks_in(self.cluster_shape);
        let fail = |ctx: &Self, detail: String| {
            let a = Some(addr);
            Err(ctx.fault(w, lane, pc, FaultKind::IllegalAddress, a, detail))
        };
        if rank >= n as u64 {
            let detail = format!(
                "shared::cluster memory: the address names rank {rank}, the cluster's blocks \
                 are ranks 0 to {}",
                n - 1
            );
            return fail(self, detail);
        }
        if !super::in_window(off, size, self.shared_limit) {
            let detail = format!(
                "shared::cluster memory: the block of rank {rank} has {} bytes ({} its own \
                 after the {} the system reserves)",
                self.shared_limit,
                self.shared_limit - crate::RESERVED_SHARED,
                crate::RESERVED_SHARED
            );
            return fail(self, detail);
        }
        if rank as u32 == self.cluster_rank() {
            Ok(Loc::Shared(off as usize))
        } else {
            Ok(Loc::Remote(rank as usize, off as usize))
        }
    }

    /// `getctarank`: the rank of the block whose shared memory the address names.
    pub(super) fn get_cta_rank(
        &mut self,
        w: &mut Warp,
        d: Dst,
        a: Src,
        generic: bool,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut v = [0u64; 32];
        self.fetch(w, a, &mut v);
        let own = self.cluster_rank() as u64;
        let n = blocks_in(self.cluster_shape) as u64;
        let mut out = [0u64; 32];
        for l in 0..32 {
            if emask >> l & 1 == 0 {
                continue;
            }
            let off = if generic {
                v[l].wrapping_sub(SHARED_WINDOW)
            } else {
                v[l] as u32 as u64
            };
            let rank = if off < CLUSTER_RANK_STRIDE {
                own
            } else {
                off / CLUSTER_RANK_STRIDE - 1
            };
            if off >= WINDOW_SIZE || rank >= n {
                let detail = format!(
                    "getctarank: not an address of the cluster's shared memory ({n} blocks)"
                );
                let kind = FaultKind::IllegalAddress;
                return Err(self.fault(w, l as u32, pc, kind, Some(v[l]), detail));
            }
            out[l] = rank;
        }
        write(w, d, &out, emask);
        Ok(())
    }
}
