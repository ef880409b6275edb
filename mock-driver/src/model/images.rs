//! The images a program hands the driver, read so that no image can hang, crash or
//! exhaust the host (issue 19): from the program's memory, where cuModuleLoadData,
//! cuModuleLoadFatBinary and cuLibraryLoadData give a bare pointer and no length, and
//! from files (cuModuleLoad, cuLibraryLoadFromFile, and the profile of CUMOCK_PROFILE).
//!
//! Memory: every byte comes through [`ProgramMemory`], which copies what is readable into
//! a buffer of the mock's own and says where readable memory ends, so an unreadable byte
//! is CUDA_ERROR_INVALID_IMAGE, never a fault. A fatbin is read as far as its header
//! declares (at most [`MAX_IMAGE_BYTES`]), text up to its NUL (the same cap). The runtime's
//! wrapper (magic 0x466243B1, a pointer to the fatbin) is no image of the driver's: the
//! H200 refuses it, alone, chained or cyclic, with CUDA_ERROR_INVALID_IMAGE (probe
//! sandbox_images, wrappers), and so does the mock, without following its pointer.
//!
//! Files: only regular files, of at most a cap each; a device (`/dev/zero`), a FIFO or a
//! directory is refused with its name, before a byte is read, and without blocking (a
//! FIFO with no writer would block an ordinary open).

use super::error::*;
use super::module::Image;
use cumock_abi::result::*;
use cumock_ptx::fatbin::{FATBIN_MAGIC, WRAPPER_MAGIC};
use std::fmt;
use std::io::Read;

/// The largest module image the mock reads, from memory or a file: 1 GiB, above any
/// fatbin nvcc writes for one translation unit (PyTorch's largest are a few hundred MiB
/// of SASS for every architecture) and what a host can decode at all, and far below a
/// size that could take the host's memory.
pub const MAX_IMAGE_BYTES: u64 = 1 << 30;

/// The largest profile file: a profile is a few KiB of JSON per device (147 attributes);
/// 16 MiB holds thousands of devices and keeps a mistaken CUMOCK_PROFILE cheap.
pub const MAX_PROFILE_BYTES: u64 = 16 << 20;

const ELF_MAGIC: u32 = 0x464C_457F;

/// The program's memory, read without trusting an address.
pub trait ProgramMemory {
    /// Copies the bytes at `addr` into `buf`, as many as are readable from `addr` on;
    /// returns how many (fewer than `buf.len()` where readable memory ends).
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize;
}

/// This process's memory, through the kernel (`os::read_program_memory`).
pub struct OwnProcess;

impl ProgramMemory for OwnProcess {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        crate::os::read_program_memory(addr, buf)
    }
}

fn invalid_image(message: impl Into<std::borrow::Cow<'static, str>>) -> CuError {
    CuError::new(CUDA_ERROR_INVALID_IMAGE, message)
}

/// Reads `len` bytes at `addr`, the buffer growing as the bytes arrive, so that a size a
/// header merely declares costs nothing until the memory really is there. Err: how many
/// bytes were readable.
fn read_exact(mem: &impl ProgramMemory, addr: u64, len: u64) -> Result<Vec<u8>, u64> {
    const CHUNK: u64 = 1 << 20;
    let mut out = Vec::new();
    while (out.len() as u64) < len {
        let at = out.len();
        let n = CHUNK.min(len - at as u64) as usize;
        out.resize(at + n, 0);
        let got = match addr.checked_add(at as u64) {
            Some(a) => mem.read(a, &mut out[at..]),
            None => 0,
        };
        if got < n {
            return Err((at + got) as u64);
        }
    }
    Ok(out)
}

/// Reads a NUL-terminated image (PTX text) at `addr`, without its NUL.
fn read_text(mem: &impl ProgramMemory, addr: u64) -> CuResult<Vec<u8>> {
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = 4096usize;
    loop {
        let at = out.len();
        out.resize(at + chunk, 0);
        let got = match addr.checked_add(at as u64) {
            Some(a) => mem.read(a, &mut out[at..]),
            None => 0,
        };
        if let Some(nul) = out[at..at + got].iter().position(|b| *b == 0) {
            out.truncate(at + nul);
            return Ok(out);
        }
        if got < chunk {
            return Err(invalid_image(format!(
                "the image at {addr:#x} is no fatbin or ELF, and as text it runs into \
                 unreadable memory at {:#x} before its terminating NUL",
                addr.wrapping_add((at + got) as u64)
            )));
        }
        out.truncate(at + got);
        if out.len() as u64 >= MAX_IMAGE_BYTES {
            return Err(invalid_image(format!(
                "the text image at {addr:#x} has no NUL within {MAX_IMAGE_BYTES} bytes"
            )));
        }
        chunk = (chunk * 2).min(16 << 20);
    }
}

/// The image at `addr` in the program's memory: a fatbin, an ELF cubin, or text.
pub fn image_at(mem: &impl ProgramMemory, at: u64) -> CuResult<Image> {
    let mut head = [0u8; 16];
    let n = mem.read(at, &mut head);
    if n == 0 {
        return Err(invalid_image(format!(
            "the image at {at:#x} is not readable memory"
        )));
    }
    let magic = (n >= 4).then(|| u32::from_le_bytes([head[0], head[1], head[2], head[3]]));
    match magic {
        Some(WRAPPER_MAGIC) => Err(invalid_image(format!(
            "the image at {at:#x} is the runtime's fatbin wrapper (__fatBinC_Wrapper_t), \
             which the driver does not load: pass the fatbin its data points to"
        ))),
        Some(FATBIN_MAGIC) => {
            // { u32 magic, u16 version, u16 header size, u64 size of what follows }.
            if n < 16 {
                return Err(invalid_image(format!(
                    "the fatbin header at {at:#x} is truncated: {n} of its 16 bytes are readable"
                )));
            }
            let header = u64::from(u16::from_le_bytes([head[6], head[7]]));
            let size = u64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
            // A size whose end lies past the top of the address space: the H200 finds no
            // entry in it (CUDA_ERROR_NO_BINARY_FOR_GPU, probe sandbox_images,
            // fatbin-truncated-2-64-declared), where one that merely runs into unreadable
            // memory crashes it (the mock refuses those below).
            if u128::from(at) + u128::from(header) + u128::from(size) > u128::from(u64::MAX) {
                return Err(CuError::new(
                    CUDA_ERROR_NO_BINARY_FOR_GPU,
                    format!(
                        "the fatbin at {at:#x} declares {header} + {size} bytes, past the end of \
                         the address space: no binary in it"
                    ),
                ));
            }
            let total = header
                .checked_add(size)
                .filter(|t| *t <= MAX_IMAGE_BYTES)
                .ok_or_else(|| {
                    invalid_image(format!(
                        "the fatbin at {at:#x} declares {header} + {size} bytes, more than \
                         the {MAX_IMAGE_BYTES} an image may hold"
                    ))
                })?;
            let bytes = read_exact(mem, at, total).map_err(|got| {
                invalid_image(format!(
                    "the fatbin at {at:#x} declares {total} bytes, but only {got} are \
                     readable there"
                ))
            })?;
            Ok(Image::classify(bytes))
        }
        Some(ELF_MAGIC) => Ok(Image::Elf),
        _ => Ok(Image::classify(read_text(mem, at)?)),
    }
}

/// Why a file could not be read.
#[derive(Debug)]
pub enum FileError {
    /// It could not be opened (missing, no permission).
    Open(String, std::io::Error),
    /// Not a regular file: a device, a FIFO, a socket, a directory.
    NotRegular(String, &'static str),
    /// Larger than the cap for its kind.
    TooLarge(String, u64),
    Read(String, std::io::Error),
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Open(p, e) => write!(f, "{p}: {e}"),
            FileError::NotRegular(p, kind) => {
                write!(f, "{p} is a {kind}, not a regular file: refused")
            }
            FileError::TooLarge(p, cap) => write!(f, "{p} is larger than {cap} bytes: refused"),
            FileError::Read(p, e) => write!(f, "{p}: {e}"),
        }
    }
}

/// The bytes of a regular file of at most `cap` bytes. Opened without blocking (a FIFO
/// with no writer would block an ordinary open), checked to be a regular file on the
/// open descriptor (no race with a rename), and read to at most `cap` bytes whatever its
/// size says (a file may grow while read).
pub fn read_file(path: &str, cap: u64) -> Result<Vec<u8>, FileError> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| FileError::Open(path.to_owned(), e))?;
    let meta = file
        .metadata()
        .map_err(|e| FileError::Read(path.to_owned(), e))?;
    let t = meta.file_type();
    if !t.is_file() {
        let kind = if t.is_dir() {
            "directory"
        } else if t.is_char_device() {
            "character device"
        } else if t.is_block_device() {
            "block device"
        } else if t.is_fifo() {
            "FIFO"
        } else if t.is_socket() {
            "socket"
        } else {
            "special file"
        };
        return Err(FileError::NotRegular(path.to_owned(), kind));
    }
    if meta.len() > cap {
        return Err(FileError::TooLarge(path.to_owned(), cap));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::Read(path.to_owned(), e))?;
    if bytes.len() as u64 > cap {
        return Err(FileError::TooLarge(path.to_owned(), cap));
    }
    Ok(bytes)
}

/// A module image from a file (cuModuleLoad, cuLibraryLoadFromFile). As the H200 answers
/// (probe sandbox_images, files): a file that cannot be opened is
/// CUDA_ERROR_FILE_NOT_FOUND, a directory CUDA_ERROR_OUT_OF_MEMORY, a device (/dev/zero)
/// CUDA_ERROR_INVALID_IMAGE; a file over the cap is no image either.
pub fn image_file(path: &str) -> CuResult<Image> {
    let mut bytes = read_file(path, MAX_IMAGE_BYTES).map_err(|e| match e {
        FileError::Open(..) => CuError::new(CUDA_ERROR_FILE_NOT_FOUND, e.to_string()),
        FileError::NotRegular(_, "directory") => {
            CuError::new(CUDA_ERROR_OUT_OF_MEMORY, e.to_string())
        }
        _ => invalid_image(e.to_string()),
    })?;
    // A text file has no NUL; a PTX image in memory ends at one.
    if let Some(n) = bytes.iter().position(|b| *b == 0) {
        if !cumock_ptx::fatbin::is_fatbin(&bytes) && !cumock_ptx::fatbin::is_elf(&bytes) {
            bytes.truncate(n);
        }
    }
    Ok(Image::classify(bytes))
}

/// Reads `len` bytes the program gave with their size (cuLinkAddData's input), through
/// the kernel as images are read, capped as they are.
pub fn bytes_at(mem: &impl ProgramMemory, addr: u64, len: u64) -> CuResult<Vec<u8>> {
    if len > MAX_IMAGE_BYTES {
        return Err(CuError::new(
            cumock_abi::result::CUDA_ERROR_INVALID_VALUE,
            format!("{len} bytes: more than the {MAX_IMAGE_BYTES} an image may have"),
        ));
    }
    read_exact(mem, addr, len).map_err(|got| {
        CuError::new(
            cumock_abi::result::CUDA_ERROR_INVALID_VALUE,
            format!("only {got} of the {len} bytes at {addr:#x} are readable"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A program's memory made of readable regions; everything else unreadable.
    #[derive(Default)]
    struct Regions(BTreeMap<u64, Vec<u8>>);

    impl ProgramMemory for Regions {
        fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
            let Some((base, bytes)) = self.0.range(..=addr).next_back() else {
                return 0;
            };
            let off = (addr - base) as usize;
            if off >= bytes.len() {
                return 0;
            }
            let n = buf.len().min(bytes.len() - off);
            buf[..n].copy_from_slice(&bytes[off..off + n]);
            n
        }
    }

    fn wrapper(data: u64) -> Vec<u8> {
        let mut w = WRAPPER_MAGIC.to_le_bytes().to_vec();
        w.extend_from_slice(&1u32.to_le_bytes());
        w.extend_from_slice(&data.to_le_bytes());
        w.extend_from_slice(&0u64.to_le_bytes());
        w
    }

    fn fatbin_header(header: u16, size: u64) -> Vec<u8> {
        let mut h = FATBIN_MAGIC.to_le_bytes().to_vec();
        h.extend_from_slice(&1u16.to_le_bytes());
        h.extend_from_slice(&header.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h
    }

    fn refused(mem: &Regions, addr: u64, why: &str) {
        match image_at(mem, addr) {
            Err(e) => {
                assert_eq!(e.code, CUDA_ERROR_INVALID_IMAGE, "{}", e.message);
                assert!(e.message.contains(why), "{}", e.message);
            }
            Ok(_) => panic!("the image at {addr:#x} was taken; expected: {why}"),
        }
    }

    #[test]
    fn wrappers_are_refused_without_following_them() {
        let mut m = Regions::default();
        // The H200 refuses every runtime wrapper (probe sandbox_images, wrappers): alone,
        // cyclic, chained, with a NULL or a wild data pointer, or before good PTX.
        m.0.insert(0x1000, wrapper(0x1000));
        m.0.insert(0x2000, wrapper(0x3000));
        m.0.insert(0x3000, wrapper(0x2000));
        m.0.insert(0x4000, wrapper(0));
        m.0.insert(0x5000, wrapper(0x9999_0000));
        m.0.insert(0x6000, wrapper(0x7000));
        m.0.insert(0x7000, b".version 8.0\n.target sm_90\n\0".to_vec());
        for at in [0x1000, 0x2000, 0x4000, 0x5000, 0x6000] {
            refused(&m, at, "the runtime's fatbin wrapper");
        }
        assert!(matches!(image_at(&m, 0x7000), Ok(Image::Ptx(_))));
    }

    #[test]
    fn headers_and_declared_sizes_never_read_past_readable_memory() {
        let mut m = Regions::default();
        // Only 8 bytes of a fatbin header, then unreadable memory.
        m.0.insert(0x1000, fatbin_header(16, 64)[..8].to_vec());
        refused(&m, 0x1000, "8 of its 16 bytes");
        // A header declaring more than is there.
        let mut short = fatbin_header(16, 1 << 20);
        short.resize(4096, 0);
        m.0.insert(0x10_000, short);
        refused(&m, 0x10_000, "only 4096 are readable");
        // A header declaring more than any image may hold.
        m.0.insert(0x20_000, fatbin_header(16, 1 << 40));
        refused(&m, 0x20_000, "more than the 1073741824");
        // One whose end lies past the address space: no binary, as on the H200.
        m.0.insert(0x28_000, fatbin_header(16, u64::MAX - 64));
        match image_at(&m, 0x28_000) {
            Err(e) => assert_eq!(e.code, CUDA_ERROR_NO_BINARY_FOR_GPU, "{}", e.message),
            Ok(_) => panic!("a fatbin declaring 2^64 bytes was taken"),
        }
        // A wrapper cut short is still a wrapper, refused without reading on.
        m.0.insert(0x30_000, wrapper(0x1000)[..12].to_vec());
        refused(&m, 0x30_000, "the runtime's fatbin wrapper");
        // Text that runs into unreadable memory before its NUL.
        m.0.insert(0x40_000, vec![b'x'; 10_000]);
        refused(&m, 0x40_000, "before its terminating NUL");
        // A fatbin exactly as long as declared is read, and handed on whole.
        let mut exact = fatbin_header(16, 48);
        exact.resize(64, 0);
        m.0.insert(0x50_000, exact);
        assert!(matches!(image_at(&m, 0x50_000), Ok(Image::Fatbin(b)) if b.len() == 64));
    }

    #[test]
    fn the_own_process_reader_stops_at_unreadable_memory() {
        let text = b"hello\0".to_vec();
        let addr = text.as_ptr() as u64;
        let mut buf = [0u8; 6];
        assert_eq!(OwnProcess.read(addr, &mut buf), 6);
        assert_eq!(&buf, b"hello\0");
        // An address no user mapping can hold, and NULL's page.
        assert_eq!(OwnProcess.read(0xffff_ffff_ffff_0000, &mut buf), 0);
        assert_eq!(OwnProcess.read(8, &mut buf), 0);
        assert!(matches!(
            image_at(&OwnProcess, 8),
            Err(e) if e.code == CUDA_ERROR_INVALID_IMAGE
        ));
    }

    #[test]
    fn special_and_oversized_files_are_refused_naming_them() {
        let e = read_file("/dev/zero", 1 << 20).unwrap_err();
        assert!(
            e.to_string().contains("/dev/zero is a character device"),
            "{e}"
        );
        let e = read_file("/", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("/ is a directory"), "{e}");
        let dir = std::env::temp_dir().join(format!("cumock-images-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // Safety: a NUL-terminated path of ours.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_file(fifo.to_str().unwrap(), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("is a FIFO"), "{e}");
        let big = dir.join("big");
        std::fs::write(&big, vec![b'x'; 4097]).unwrap();
        let e = read_file(big.to_str().unwrap(), 4096).unwrap_err();
        assert!(e.to_string().contains("larger than 4096 bytes"), "{e}");
        assert_eq!(read_file(big.to_str().unwrap(), 4097).unwrap().len(), 4097);
        std::fs::remove_dir_all(&dir).unwrap();
        let code = |path| image_file(path).err().map(|e| e.code);
        assert_eq!(code("/dev/zero"), Some(CUDA_ERROR_INVALID_IMAGE));
        assert_eq!(code("/nonexistent/x.ptx"), Some(CUDA_ERROR_FILE_NOT_FOUND));
    }
}
