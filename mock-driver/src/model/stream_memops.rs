//! Stream memory operations (cuStreamWaitValue32/64, cuStreamWriteValue32/64): a 32- or
//! 64-bit write, or a wait for a word of memory to meet a condition, in a stream's order,
//! as a GPU's front end does them. They are jobs of the stream's queue
//! (model/stream_queues.rs) like a host function: a write stores the value when the
//! stream reaches it; a wait holds the stream's later work until the word meets its
//! condition, polling it.
//!
//! A wait for a value that never comes hangs a GPU's stream, and whoever synchronises with
//! it. The mock bounds the wait as it bounds a kernel (CUMOCK_KERNEL_TIMEOUT, the same
//! default): past it the device gets a sticky CUDA_ERROR_LAUNCH_TIMEOUT that names the
//! wait, its address, condition and the value it last read, which the synchronising call
//! returns, so that a CI job ends with a message rather than hanging. A fault elsewhere
//! on the device (a sticky error) ends the wait too.

use super::copies::{HostOrDevice, Pattern};
use super::error::*;
use super::ids::{DevicePtr, StreamId};
use super::vmm::Need;
use super::Driver;
use crate::host_bytes::HostBytes;
use std::time::{Duration, Instant};

/// A wait's condition (CUstreamWaitValue_flags, the low bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitCondition {
    /// CU_STREAM_WAIT_VALUE_GEQ: `(int)(*addr - value) >= 0`, a cyclic comparison.
    Geq,
    /// CU_STREAM_WAIT_VALUE_EQ.
    Eq,
    /// CU_STREAM_WAIT_VALUE_AND: `(*addr & value) != 0`.
    And,
    /// CU_STREAM_WAIT_VALUE_NOR: `~(*addr | value) != 0`.
    Nor,
}

/// CU_STREAM_WAIT_VALUE_FLUSH.
pub const WAIT_VALUE_FLUSH: u32 = 1 << 30;
/// CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER (not in the _v2 API).
pub const WRITE_VALUE_NO_MEMORY_BARRIER: u32 = 1;

impl WaitCondition {
    /// The condition of a wait's flags; CU_STREAM_WAIT_VALUE_FLUSH needs
    /// CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, which the H200 does not have.
    pub fn of_flags(flags: u32, can_flush: bool) -> CuResult<Self> {
        if flags & WAIT_VALUE_FLUSH != 0 && !can_flush {
            // Observed: CUDA_ERROR_NOT_SUPPORTED (probe api_gaps, stream-memops).
            return Err(not_supported(
                "CU_STREAM_WAIT_VALUE_FLUSH: the device cannot flush remote writes \
                 (CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES is 0)",
            ));
        }
        Ok(match flags & !WAIT_VALUE_FLUSH {
            0 => Self::Geq,
            1 => Self::Eq,
            2 => Self::And,
            3 => Self::Nor,
            other => {
                return Err(invalid(format!(
                    "flags {other:#x} are not a CUstreamWaitValue_flags condition"
                )))
            }
        })
    }

    /// Whether `word` (of `wide` 64 bits, else 32) meets the condition for `value`.
    pub fn holds(self, word: u64, value: u64, wide: bool) -> bool {
        let mask = if wide { u64::MAX } else { u64::from(u32::MAX) };
        let (word, value) = (word & mask, value & mask);
        match self {
            Self::Geq if wide => (word.wrapping_sub(value) as i64) >= 0,
            Self::Geq => (word.wrapping_sub(value) as u32 as i32) >= 0,
            Self::Eq => word == value,
            Self::And => word & value != 0,
            Self::Nor => !(word | value) & mask != 0,
        }
    }
}

/// One stream memory operation, checked: what cuStreamBatchMemOp queues, and what a
/// graph's batch memory-operation node runs (cuGraphAddBatchMemOpNode, or a capture).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemOp {
    Wait {
        addr: DevicePtr,
        value: u64,
        wide: bool,
        condition: WaitCondition,
    },
    Write {
        addr: DevicePtr,
        value: u64,
        wide: bool,
    },
    /// CU_STREAM_MEM_OP_BARRIER: the mock's stream runs its jobs one after another, each
    /// write done before the next job starts, so a barrier orders nothing more.
    Barrier,
}

impl MemOp {
    fn name(&self) -> &'static str {
        match self {
            MemOp::Wait { wide: true, .. } => "cuStreamWaitValue64",
            MemOp::Wait { .. } => "cuStreamWaitValue32",
            MemOp::Write { wide: true, .. } => "cuStreamWriteValue64",
            MemOp::Write { .. } => "cuStreamWriteValue32",
            MemOp::Barrier => "CU_STREAM_MEM_OP_BARRIER",
        }
    }
}

/// How long a wait sleeps between two reads of its word once it has watched a while.
const POLL: Duration = Duration::from_micros(100);

impl Driver {
    /// The checks of a stream memory operation on `addr` when it is issued: the stream,
    /// the word's alignment, and memory the current context's device may reach. The
    /// device, for the job. (On a capturing stream the operation becomes a graph node
    /// instead: exports/stream_memops.rs.)
    pub fn check_mem_op(&self, stream: StreamId, addr: DevicePtr, wide: bool) -> CuResult<usize> {
        self.stream_check(stream)?;
        self.check_mem_op_word(None, addr, wide)
    }

    /// The checks of a stream memory operation's word on the device of context `ctx`
    /// (None: the current one): its alignment, memory the device may reach. The device.
    pub fn check_mem_op_word(
        &self,
        ctx: Option<super::ids::ContextId>,
        addr: DevicePtr,
        wide: bool,
    ) -> CuResult<usize> {
        let width = if wide { 8 } else { 4 };
        if !addr.get().is_multiple_of(width) {
            return Err(invalid(format!(
                "{:#x} is not aligned to the {width}-byte word",
                addr.get()
            )));
        }
        let device = self.ctx_device(ctx)?;
        let st = self.state.lock();
        self.check_sticky(&st, device)?;
        if let Some(fits) = st.host.check_copy(addr.get(), width) {
            return fits.map(|()| device);
        }
        st.vmm.segments(addr.get(), width, device, Need::Write)?;
        Ok(device)
    }

    /// Reads the word at `addr` as `device` does: page-locked host memory in place, device
    /// memory through a copy.
    fn read_word(&self, device: usize, addr: u64, wide: bool) -> CuResult<u64> {
        let len = if wide { 8 } else { 4 };
        let host = self.state.lock().host.check_copy(addr, len);
        if let Some(fits) = host {
            fits?;
            // Safety: the driver holds this page-locked range (allocated or registered,
            // so mapped) and `fits` says the word is in it; the program may write it
            // meanwhile (that is what a wait is for), hence the volatile read.
            return Ok(unsafe {
                if wide {
                    std::ptr::read_volatile(addr as *const u64)
                } else {
                    u64::from(std::ptr::read_volatile(addr as *const u32))
                }
            });
        }
        let mut buf = [0u8; 8];
        self.copy_on(
            device,
            HostOrDevice::Host(HostBytes::from_mut_slice(&mut buf[..len as usize])),
            HostOrDevice::Device(DevicePtr::new(addr)),
            len,
            false,
        )?;
        Ok(if wide {
            u64::from_ne_bytes(buf)
        } else {
            u64::from(u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]))
        })
    }

    /// cuStreamWriteValue32/64: `value` written to `addr` when the stream reaches it.
    pub fn stream_write_value(
        &'static self,
        stream: StreamId,
        addr: DevicePtr,
        value: u64,
        wide: bool,
    ) -> CuResult<()> {
        let device = self.check_mem_op(stream, addr, wide)?;
        let what = if wide {
            "cuStreamWriteValue64"
        } else {
            "cuStreamWriteValue32"
        };
        self.enqueue_work(
            stream,
            what,
            Box::new(move || self.write_now(device, what, addr, value, wide)),
        )
    }

    /// A write when its stream reaches it.
    fn write_now(&self, device: usize, what: &str, addr: DevicePtr, value: u64, wide: bool) {
        let r = if wide {
            // Two halves in one job: nothing else of the stream runs between them.
            let lo = self.memset_on(device, addr, Pattern::D32(value as u32), 1);
            lo.and_then(|()| {
                let hi = DevicePtr::new(addr.get() + 4);
                self.memset_on(device, hi, Pattern::D32((value >> 32) as u32), 1)
            })
        } else {
            self.memset_on(device, addr, Pattern::D32(value as u32), 1)
        };
        // Checked when issued: what fails now was freed meanwhile (on a GPU, a fault).
        if let Err(e) = r {
            crate::diagnostics::warn(what, &format!("the queued write failed: {}", e.message));
        }
    }

    /// A batch memory-operation node's operations, when its graph's stream reaches it
    /// (on `device`, the node's context's), in their order.
    pub fn run_mem_ops(&self, device: usize, ops: &[MemOp]) {
        for op in ops {
            match *op {
                MemOp::Wait {
                    addr,
                    value,
                    wide,
                    condition,
                } => self.wait_now(device, op.name(), addr, value, wide, condition),
                MemOp::Write { addr, value, wide } => {
                    self.write_now(device, op.name(), addr, value, wide)
                }
                MemOp::Barrier => {}
            }
        }
    }

    /// cuStreamWaitValue32/64: the stream's later work waits until the word at `addr`
    /// meets `condition` for `value` (see the module for the bound on the wait).
    pub fn stream_wait_value(
        &'static self,
        stream: StreamId,
        addr: DevicePtr,
        value: u64,
        wide: bool,
        condition: WaitCondition,
    ) -> CuResult<()> {
        let device = self.check_mem_op(stream, addr, wide)?;
        let what = if wide {
            "cuStreamWaitValue64"
        } else {
            "cuStreamWaitValue32"
        };
        self.enqueue_work(
            stream,
            what,
            Box::new(move || self.wait_now(device, what, addr, value, wide, condition)),
        )
    }

    /// A wait when its stream reaches it: polls the word until it meets the condition
    /// (see the module for the bound on the wait).
    fn wait_now(
        &self,
        device: usize,
        what: &str,
        addr: DevicePtr,
        value: u64,
        wide: bool,
        condition: WaitCondition,
    ) {
        let limit = self.kernel.time_limit;
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            let word = match self.read_word(device, addr.get(), wide) {
                Ok(w) => w,
                // A sticky fault of the device, or the memory freed: the wait ends
                // (the device's error is what the synchronising calls report).
                Err(e) => {
                    if self.state.lock().sticky[device].is_none() {
                        crate::diagnostics::warn(
                            what,
                            &format!("the wait cannot read its word: {}", e.message),
                        );
                    }
                    return;
                }
            };
            if condition.holds(word, value, wide) {
                return;
            }
            if limit.is_some_and(|l| start.elapsed() >= l) {
                self.wait_timed_out(device, what, addr, value, condition, word, start);
                return;
            }
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(POLL);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn wait_timed_out(
        &self,
        device: usize,
        what: &str,
        addr: DevicePtr,
        value: u64,
        condition: WaitCondition,
        word: u64,
        start: Instant,
    ) {
        let message = format!(
            "{what} on {:#x} waited {:.1} s for {condition:?} {value:#x}, the word holds {word:#x} \
             (a GPU's stream would hang; CUMOCK_KERNEL_TIMEOUT=SECONDS sets the limit, 0 for none; \
             the default is {} s)",
            addr.get(),
            start.elapsed().as_secs_f64(),
            cumock_support::settings::DEFAULT_KERNEL_TIMEOUT_S
        );
        crate::diagnostics::kernel_fault(&message);
        let mut st = self.state.lock();
        if st.sticky[device].is_none() {
            st.sticky[device] = Some(CuError::new(
                cumock_abi::result::CUDA_ERROR_LAUNCH_TIMEOUT,
                format!("{message} (sticky: the device stays unusable in this process)"),
            ));
        }
    }
}
