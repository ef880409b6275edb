//! The driver's JIT linker (cuLinkCreate, cuLinkAddData/File, cuLinkComplete,
//! cuLinkDestroy) for PTX inputs, bare or in a fatbin: the inputs' PTX is combined into
//! one module by `cumock_ptx::link` (externs resolved across inputs, duplicates refused,
//! weak definitions giving way), checked as cuModuleLoadData would check it, and handed
//! back as the "cubin": the linked PTX text, NUL-terminated, which cuModuleLoadData
//! takes. It is the mock's output, not NVIDIA's; a program only passes it on.
//! SASS inputs (cubins, objects, libraries) cannot run on the host and are refused, but
//! for NVIDIA's device runtime (libcudadevrt.a, or its fatbin among a device-linked
//! program's objects), in whose place cumock links its own (`cudadevrt.ptx`:
//! cooperative groups' grid sync; dynamic parallelism's functions are the executor's).

use super::error::*;
use super::ids::LinkId;
use super::module::{load_error_for, reported_registers, Image};
use super::Driver;
use cumock_abi::result::*;
use cumock_ptx as ptx;
use std::collections::HashMap;

const LINK_TAG: u64 = 0x0011_0000_0000_0000;

/// cumock's own device runtime, linked where a program links NVIDIA's libcudadevrt.a.
const CUDADEVRT_PTX: &str = include_str!("cudadevrt.ptx");

/// Whether a library input is NVIDIA's device runtime: an `ar` archive whose one member
/// is `cuda_device_runtime.o`, as the toolkit's libcudadevrt.a is.
fn is_cudadevrt(bytes: &[u8]) -> bool {
    const MEMBER: &[u8] = b"cuda_device_runtime.o/";
    bytes.starts_with(b"!<arch>\n") && bytes.windows(MEMBER.len()).any(|w| w == MEMBER)
}

/// cuda.h's `CUjitInputType`.
pub mod input {
    pub const CUBIN: i32 = 0;
    pub const PTX: i32 = 1;
    pub const FATBINARY: i32 = 2;
    pub const OBJECT: i32 = 3;
    pub const LIBRARY: i32 = 4;
    pub const NVVM: i32 = 5;
}

#[derive(Default)]
pub struct LinkState {
    inputs: Vec<(String, String)>,
    /// CU_JIT_MAX_REGISTERS, written into the image as each kernel's `.maxnreg`.
    max_registers: Option<u32>,
    /// The linked image, NUL-terminated, once complete: its address is what
    /// cuLinkComplete returns, valid until cuLinkDestroy (a boxed slice never moves).
    output: Option<Box<[u8]>>,
}

#[derive(Default)]
pub struct Links {
    states: HashMap<LinkId, LinkState>,
    next_id: u64,
}

impl Links {
    fn state(&mut self, link: LinkId) -> CuResult<&mut LinkState> {
        self.states.get_mut(&link).ok_or_else(|| {
            invalid_handle(format!(
                "{link:#x} is not a link state (destroyed already, or never one)"
            ))
        })
    }
}

impl Driver {
    pub fn link_create(&self, max_registers: Option<u32>) -> CuResult<LinkId> {
        let mut st = self.state.lock();
        st.contexts.require_current()?;
        st.links.next_id += 1;
        let id = LinkId::from_handle(LINK_TAG | st.links.next_id);
        st.links.states.insert(
            id,
            LinkState {
                max_registers,
                ..LinkState::default()
            },
        );
        Ok(id)
    }

    /// cuLinkAddData/File: `bytes` of input `kind`, named `name` in messages.
    pub fn link_add(&self, link: LinkId, kind: i32, bytes: Vec<u8>, name: &str) -> CuResult<()> {
        let device = {
            let mut st = self.state.lock();
            st.links.state(link)?;
            st.contexts.require_current()?.1.device
        };
        let sass = |what: &str| {
            CuError::new(
                CUDA_ERROR_NO_BINARY_FOR_GPU,
                format!(
                    "{name}: {what} holds SASS, which cumock cannot run on the host; link PTX \
                     instead: nvcc -ptx -rdc=true (or a fatbin with code=compute_90), added as \
                     CU_JIT_INPUT_PTX or CU_JIT_INPUT_FATBINARY"
                ),
            )
        };
        let text = match kind {
            input::PTX => {
                let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                String::from_utf8(bytes[..end].to_vec()).map_err(|_| {
                    CuError::new(
                        CUDA_ERROR_INVALID_PTX,
                        format!("{name}: the PTX input is not UTF-8 text"),
                    )
                })?
            }
            input::FATBINARY => match Image::classify(bytes) {
                // NVIDIA's device runtime among a device-linked program's objects
                // (cumock's runtime links their fatbins): cumock's own in its place.
                Image::Fatbin(b) if ptx::fatbin::is_device_runtime(&b) => CUDADEVRT_PTX.to_string(),
                Image::Fatbin(b) => {
                    let cc = self.compute_capability(device);
                    ptx::fatbin::select_ptx(&b, cc).map_err(|e| match e {
                        ptx::fatbin::FatbinError::SassOnly { .. } => sass("the fatbin"),
                        other => CuError::new(
                            CUDA_ERROR_INVALID_IMAGE,
                            format!("{name}: fatbin: {other}"),
                        ),
                    })?
                }
                _ => {
                    return Err(CuError::new(
                        CUDA_ERROR_INVALID_IMAGE,
                        format!("{name}: CU_JIT_INPUT_FATBINARY, but not a fatbin"),
                    ))
                }
            },
            // The H200 reads a cubin as ELF first: anything else is no image at all.
            input::CUBIN if !ptx::fatbin::is_elf(&bytes) => {
                return Err(CuError::new(
                    CUDA_ERROR_INVALID_IMAGE,
                    format!("{name}: CU_JIT_INPUT_CUBIN, but not an ELF cubin"),
                ))
            }
            input::CUBIN => return Err(sass("the cubin")),
            input::OBJECT => return Err(sass("the object's device code")),
            // NVIDIA's device runtime (cooperative groups' grid sync): cumock's own, in PTX.
            input::LIBRARY if is_cudadevrt(&bytes) => CUDADEVRT_PTX.to_string(),
            input::LIBRARY => return Err(sass("the library's device code")),
            input::NVVM => {
                return Err(not_supported(format!(
                    "{name}: NVVM IR (link-time optimisation) is not emulated; link PTX"
                )))
            }
            _ => return Err(invalid(format!("{kind} is not a CUjitInputType"))),
        };
        // Each input is checked as it comes, as the driver compiles it here: a file
        // that is no PTX fails its own cuLinkAddData.
        if let Err(ptx::link::LinkError::Input(_, le)) =
            ptx::link::link(&[(name.to_string(), text.clone())])
        {
            let mut e = load_error_for(&le);
            e.message = format!("{name}: {}", e.message).into();
            return Err(e);
        }
        let inputs = {
            let mut st = self.state.lock();
            let state = st.links.state(link)?;
            state.inputs.push((name.to_string(), text));
            state.inputs.clone()
        };
        // A name defined twice fails the input that defines it again, as on the H200
        // (and the link stays failed: cuLinkComplete says so again); an undefined one is
        // the whole link's business, at completion.
        match ptx::link::link(&inputs) {
            Err(e @ ptx::link::LinkError::Duplicate { .. }) => {
                Err(CuError::new(LINK_FAILURE, e.to_string()))
            }
            _ => Ok(()),
        }
    }

    /// cuLinkComplete: the linked image's address and size (with its NUL), and the
    /// info log's lines (`ptxas_info`) for CU_JIT_LOG_VERBOSE.
    pub fn link_complete(&self, link: LinkId) -> CuResult<(u64, usize, String)> {
        let (inputs, max_registers, device) = {
            let mut st = self.state.lock();
            let device = self.current_device(&st)?.1;
            let state = st.links.state(link)?;
            (state.inputs.clone(), state.max_registers, device)
        };
        let text = ptx::link::link(&inputs).map_err(|e| match e {
            ptx::link::LinkError::Input(n, le) => {
                let mut e = load_error_for(&le);
                e.message = format!("{n}: {}", e.message).into();
                e
            }
            ptx::link::LinkError::Empty => invalid("cuLinkComplete with no inputs added"),
            other => CuError::new(LINK_FAILURE, other.to_string()),
        })?;
        let text = match max_registers {
            Some(max) => ptx::link::cap_registers(&text, max).map_err(|e| load_error_for(&e))?,
            None => text,
        };
        // What cuModuleLoadData will refuse is refused here, as the driver's ptxas
        // refuses it when it finishes the link.
        let module = ptx::Module::parse(&text).map_err(|e| load_error_for(&e))?;
        let info = ptxas_info(&module, self.compute_capability(device));
        let mut bytes = text.into_bytes();
        bytes.push(0);
        let out: Box<[u8]> = bytes.into_boxed_slice();
        let (addr, len) = (out.as_ptr() as u64, out.len());
        let mut st = self.state.lock();
        st.links.state(link)?.output = Some(out);
        Ok((addr, len, info))
    }

    pub fn link_destroy(&self, link: LinkId) -> CuResult<()> {
        let mut st = self.state.lock();
        st.links.state(link)?;
        st.links.states.remove(&link);
        Ok(())
    }
}

/// The info log of a verbose link (CU_JIT_LOG_VERBOSE), in the shape of the lines the
/// H200's ptxas writes there (`ptxas -v`), with only what the mock knows for certain:
/// the module's `.global` bytes (its variables laid out in declaration order, each at its
/// alignment; ptxas may drop unused internal ones and order them its own way), then for
/// each entry (the last first, as ptxas 13 compiles them) the target, and the registers
/// cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS) answers with the static shared bytes
/// when there are some. Not written, since ptxas alone knows them: the function
/// properties (stack frame, spills), the barriers used, the constant banks and the
/// compile times.
pub(super) fn ptxas_info(module: &ptx::Module, cc: u32) -> String {
    let mut gmem = 0u64;
    for g in module
        .globals
        .iter()
        .filter(|g| g.space == ptx::StateSpace::Global)
    {
        gmem = gmem.next_multiple_of(u64::from(g.align.max(1))) + g.size;
    }
    let suffix = if module.target.ends_with('a') {
        "a"
    } else {
        ""
    };
    let mut log = format!("ptxas info    : {gmem} bytes gmem\n");
    for k in module.kernels.iter().rev() {
        log.push_str(&format!(
            "ptxas info    : Compiling entry function '{}' for 'sm_{cc}{suffix}'\n\
             ptxas info    : Used {} registers",
            k.name,
            reported_registers(k)
        ));
        if k.static_shared_bytes > 0 {
            log.push_str(&format!(", {} bytes smem", k.static_shared_bytes));
        }
        log.push('\n');
    }
    log
}

/// The result of an unresolved or multiply defined symbol, as the H200 answers it
/// (ci/gpu-checks.sh: cuLinkComplete with an undefined reference, cuLinkAddData of a
/// second definition).
const LINK_FAILURE: cumock_abi::CUresult = CUDA_ERROR_INVALID_SOURCE;
