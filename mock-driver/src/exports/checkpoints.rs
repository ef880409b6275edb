//! Checkpointing (cuda.h's group CUDA_CHECKPOINT, `CheckpointingApi`): what a process's
//! CUDA state is, asked by pid. The mock checkpoints and restores nothing; what it can
//! answer is answered as the H200 did (probe api_gaps3, checkpoints):
//! - this process runs (CU_PROCESS_STATE_RUNNING);
//! - a pid no process has (gone, or not positive) is CUDA_ERROR_OPERATING_SYSTEM, for
//!   every call;
//! - a process that never loaded the driver (pid 1) is CUDA_ERROR_NOT_INITIALIZED.
//!
//! The rest needs a driver that can stop and resume a GPU's work, which the mock does not
//! emulate: CUDA_ERROR_NOT_SUPPORTED, said.

use super::Mock;
use crate::model::error::*;
use cumock_abi::*;

/// Whose pid a checkpoint call names.
enum Process {
    This,
    /// A process that loaded a CUDA driver: its own driver would answer.
    OtherCuda,
    /// A process without a CUDA driver.
    NotCuda,
}

/// The process `pid` names: CUDA_ERROR_OPERATING_SYSTEM where none lives.
fn process(pid: i32) -> CuResult<Process> {
    if u32::try_from(pid).is_ok_and(|p| p == std::process::id()) {
        return Ok(Process::This);
    }
    let gone = || {
        CuError::new(
            crate::model::ipc::CUDA_ERROR_OPERATING_SYSTEM,
            format!("no process has pid {pid}"),
        )
    };
    if pid <= 0 {
        return Err(gone());
    }
    match std::fs::read_to_string(format!("/proc/{pid}/maps")) {
        Ok(maps) if maps.contains("libcuda.so") => Ok(Process::OtherCuda),
        Ok(_) => Ok(Process::NotCuda),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(gone()),
        // Not ours to read (pid 1 in a container): answered as the H200 answered pid 1,
        // a process no driver of ours could coordinate with.
        Err(_) => Ok(Process::NotCuda),
    }
}

/// What a call about a process that is not this one, or about checkpointing this one,
/// answers.
fn not_this(pid: i32, what: &str) -> CuResult<()> {
    match process(pid)? {
        Process::NotCuda => Err(CuError::new(
            cumock_abi::result::CUDA_ERROR_NOT_INITIALIZED,
            format!("process {pid} has not initialised a CUDA driver"),
        )),
        Process::OtherCuda => Err(not_supported(format!(
            "{what} of another process (pid {pid}): its own driver would answer; the mock \
             cannot ask it"
        ))),
        Process::This => Err(not_supported(format!(
            "{what}: the mock does not checkpoint or restore a process's GPU state"
        ))),
    }
}

impl CheckpointingApi for Mock {
    emulate! {
        fn cuCheckpointProcessGetState(_d; pid, state) {
            match process(pid)? {
                // CU_PROCESS_STATE_RUNNING: the mock never locks or checkpoints it.
                Process::This => state.write(0),
                _ => not_this(pid, "cuCheckpointProcessGetState"),
            }
        }

        /// The H200's driver names a thread of its own here; the mock has no restore
        /// thread to name.
        fn cuCheckpointProcessGetRestoreThreadId(_d; pid, _tid) {
            not_this(pid, "cuCheckpointProcessGetRestoreThreadId")
        }

        fn cuCheckpointProcessLock(_d; pid, _args) {
            not_this(pid, "cuCheckpointProcessLock")
        }

        fn cuCheckpointProcessCheckpoint(_d; pid, _args) {
            not_this(pid, "cuCheckpointProcessCheckpoint")
        }

        fn cuCheckpointProcessRestore(_d; pid, _args) {
            not_this(pid, "cuCheckpointProcessRestore")
        }

        fn cuCheckpointProcessUnlock(_d; pid, _args) {
            not_this(pid, "cuCheckpointProcessUnlock")
        }
    }
}
