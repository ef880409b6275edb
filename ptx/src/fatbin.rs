//! NVIDIA fatbin containers: find the PTX a driver would JIT for a compute capability.
//!
//! Layout (little-endian; as nvcc 12/13 write it, checked against the fatbins the tests
//! build): a 16-byte header (magic 0xBA55ED50, version u16 = 1, header size u16 = 16,
//! size of what follows u64), then entries, each a header of `header_size` bytes (64,
//! or more on newer architectures) followed by its payload padded to `padded_size`:
//!
//! | offset | field |
//! |---|---|
//! | 0 | kind u16: 1 PTX, 2 ELF (SASS), 0x10 ELF too |
//! | 4 | header size u32 |
//! | 8 | padded payload size u64 |
//! | 16 | compressed size u32 (0 when not compressed: the payload is the padded size) |
//! | 28 | SM version u32 (90 for compute_90 / sm_90) |
//! | 40 | flags u64: 0x2000 LZ4 raw block, 0x8000 zstd frame |
//! | 56 | uncompressed size u64 |
//!
//! The CUDA runtime wraps a fatbin in `__fatBinC_Wrapper_t` (magic 0x466243B1, version,
//! then a *pointer* to the fatbin): a byte slice cannot follow that pointer, so the
//! caller dereferences it; `select_ptx` accepts a wrapper only when the fatbin follows it
//! in the same bytes.

use std::fmt;

pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
pub const WRAPPER_MAGIC: u32 = 0x4662_43B1;
const KIND_PTX: u16 = 1;
const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;
/// Largest decompressed PTX we accept, whatever an entry declares: a corrupt or hostile
/// size must not allocate the host away. 1 GiB, the mock's cap on a whole module image
/// (the largest PTX nvcc writes for one translation unit is tens of MiB).
pub const MAX_PTX_BYTES: u64 = 1 << 30;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FatbinError {
    /// Only SASS for these architectures: nothing a host can run.
    #[error(
        "the fatbin holds only SASS (ELF) for {}, no PTX: code compiled for a GPU cannot run on the host; build with PTX, e.g. `-gencode arch=compute_90,code=compute_90` (with `-rdc=true` the device-linked image is SASS whatever -gencode says: cumock's own runtime then links the program from its objects' PTX, NVIDIA's runtime cannot; dynamic parallelism cannot run on the mock either way)",
        archs.iter().map(|a| format!("sm_{a}")).collect::<Vec<_>>().join(", ")
    )]
    SassOnly { archs: Vec<u32> },
    /// PTX exists, but all of it is for architectures newer than the device.
    #[error("the fatbin's PTX is for {}, newer than the device's sm_{sm}", archs.iter().map(|a| format!("compute_{a}")).collect::<Vec<_>>().join(", "))]
    NoCompatiblePtx { archs: Vec<u32>, sm: u32 },
    #[error("malformed fatbin: {0}")]
    Malformed(String),
    /// A compressed entry that does not decompress to its declared size, or declares more
    /// than a module may hold (the H200 answers CUDA_ERROR_UNKNOWN: probe sandbox_images,
    /// zstd-sizes).
    #[error("fatbin entry: {0}")]
    Decompression(String),
}

pub fn is_fatbin(image: &[u8]) -> bool {
    matches!(read_u32(image, 0), Some(FATBIN_MAGIC) | Some(WRAPPER_MAGIC))
}

pub fn is_elf(image: &[u8]) -> bool {
    image.starts_with(b"\x7fELF")
}

fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// One entry of a fatbin.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub kind: u16,
    pub sm: u32,
    pub flags: u64,
    pub uncompressed_size: u64,
    pub payload: &'a [u8],
}

impl fmt::Display for Entry<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.kind == KIND_PTX { "PTX" } else { "ELF" };
        write!(
            f,
            "{kind} sm_{} ({} bytes, flags {:#x})",
            self.sm,
            self.payload.len(),
            self.flags
        )
    }
}

fn malformed<T>(why: impl Into<String>) -> Result<T, FatbinError> {
    Err(FatbinError::Malformed(why.into()))
}

/// The entries of the fatbin at the start of `image` (after a wrapper, if one is there).
pub fn entries(image: &[u8]) -> Result<Vec<Entry<'_>>, FatbinError> {
    let mut b = image;
    if read_u32(b, 0) == Some(WRAPPER_MAGIC) {
        if read_u32(b, 16) != Some(FATBIN_MAGIC) {
            return malformed("a fatbin wrapper (0x466243B1) whose fatbin is not in the same bytes; pass the fatbin its `data` pointer points to");
        }
        b = &b[16..];
    }
    if read_u32(b, 0) != Some(FATBIN_MAGIC) {
        return malformed("no fatbin magic 0xBA55ED50");
    }
    let (Some(header_size), Some(size)) = (read_u16(b, 6), read_u64(b, 8)) else {
        return malformed("truncated header");
    };
    let header_size = header_size as usize;
    if header_size < 16 {
        return malformed(format!("header size {header_size}"));
    }
    let end = (header_size as u64)
        .checked_add(size)
        .filter(|e| *e <= b.len() as u64);
    let Some(end) = end else {
        return malformed(format!(
            "declares {size} bytes of entries, {} present",
            b.len().saturating_sub(header_size)
        ));
    };
    let end = end as usize;
    let mut at = header_size;
    let mut out = Vec::new();
    while at < end {
        let h = &b[at..end];
        let (Some(kind), Some(eh), Some(padded), Some(psize), Some(sm), Some(flags), Some(unc)) = (
            read_u16(h, 0),
            read_u32(h, 4),
            read_u64(h, 8),
            read_u32(h, 16),
            read_u32(h, 28),
            read_u64(h, 40),
            read_u64(h, 56),
        ) else {
            return malformed(format!("truncated entry header at offset {at}"));
        };
        let eh = eh as usize;
        if eh < 64 || eh > h.len() {
            return malformed(format!("entry at offset {at}: header size {eh}"));
        }
        let compressed = flags & (FLAG_LZ4 | FLAG_ZSTD) != 0;
        let psize = if compressed { psize as u64 } else { padded };
        if psize > usize::MAX as u64 / 2 {
            return malformed(format!("entry at offset {at}: payload size {psize}"));
        }
        let Some(payload) = h.get(eh..eh.saturating_add(psize as usize)) else {
            return malformed(format!(
                "entry at offset {at}: payload of {psize} bytes runs past the end"
            ));
        };
        if padded < psize {
            return malformed(format!(
                "entry at offset {at}: padded size {padded} < payload size {psize}"
            ));
        }
        out.push(Entry {
            kind,
            sm,
            flags,
            uncompressed_size: unc,
            payload,
        });
        let next = (at as u64)
            .checked_add(eh as u64)
            .and_then(|x| x.checked_add(padded));
        match next {
            Some(n) if n <= end as u64 && n > at as u64 => at = n as usize,
            _ => {
                return malformed(format!(
                    "entry at offset {at}: its padded size runs past the end"
                ))
            }
        }
    }
    Ok(out)
}

/// The PTX text of an entry, decompressed.
pub fn entry_text(e: &Entry<'_>) -> Result<String, FatbinError> {
    let compressed = e.flags & (FLAG_LZ4 | FLAG_ZSTD) != 0;
    // A compressed entry decompresses to exactly its declared size (nvcc writes it; the
    // driver sizes its buffer by it): never more, and never more than the global cap.
    if compressed && e.uncompressed_size > MAX_PTX_BYTES {
        return Err(FatbinError::Decompression(format!(
            "{e} declares {} uncompressed bytes, more than the {MAX_PTX_BYTES} a module may hold",
            e.uncompressed_size
        )));
    }
    // An LZ4 block expands at most 255-fold (one literal-length byte per 255 bytes of
    // match): a declared size beyond that is not this payload's, and must not be
    // allocated before a byte is decoded.
    if e.flags & FLAG_LZ4 != 0 && e.uncompressed_size > (e.payload.len() as u64 + 16) * 255 {
        return Err(FatbinError::Decompression(format!(
            "{e} declares {} uncompressed bytes, more than its {}-byte LZ4 payload can hold",
            e.uncompressed_size,
            e.payload.len()
        )));
    }
    let bytes: Vec<u8> = if e.flags & FLAG_LZ4 != 0 {
        lz4_flex::block::decompress(e.payload, e.uncompressed_size as usize)
            .map_err(|err| FatbinError::Decompression(format!("LZ4 payload of {e}: {err}")))?
    } else if e.flags & FLAG_ZSTD != 0 {
        use std::io::Read;
        let mut dec = ruzstd::StreamingDecoder::new(e.payload)
            .map_err(|err| FatbinError::Decompression(format!("zstd payload of {e}: {err}")))?;
        let mut out = Vec::new();
        // One byte more than declared tells a payload that runs over from one that fits.
        (&mut dec)
            .take(e.uncompressed_size + 1)
            .read_to_end(&mut out)
            .map_err(|err| FatbinError::Decompression(format!("zstd payload of {e}: {err}")))?;
        if out.len() as u64 > e.uncompressed_size {
            return Err(FatbinError::Decompression(format!(
                "zstd payload of {e} decompresses to more than its declared {} bytes",
                e.uncompressed_size
            )));
        }
        out
    } else {
        e.payload.to_vec()
    };
    // PTX in a fatbin ends with a NUL (and padding).
    let text = match bytes.iter().position(|&c| c == 0) {
        Some(n) => &bytes[..n],
        None => &bytes[..],
    };
    String::from_utf8(text.to_vec())
        .map_err(|_| FatbinError::Malformed(format!("{e}: PTX is not UTF-8")))
}

/// The PTX a driver JITs for compute capability `sm` (e.g. 90): the entry with the
/// highest PTX architecture not above `sm`.
pub fn select_ptx(image: &[u8], sm: u32) -> Result<String, FatbinError> {
    let es = entries(image)?;
    let ptx: Vec<&Entry> = es.iter().filter(|e| e.kind == KIND_PTX).collect();
    if ptx.is_empty() {
        let mut archs: Vec<u32> = es.iter().map(|e| e.sm).collect();
        archs.sort_unstable();
        archs.dedup();
        if archs.is_empty() {
            return malformed("no entries");
        }
        return Err(FatbinError::SassOnly { archs });
    }
    let best = ptx.iter().filter(|e| e.sm <= sm).map(|e| e.sm).max();
    match best {
        Some(best) => {
            // `-arch=sm_90a` embeds compute_90 PTX beside compute_90a's (nvcc 13), both sm
            // 90 here. Arch-specific PTX (`.target sm_90a`: wgmma) runs only on that
            // architecture, and there it is the one to run.
            let texts = ptx
                .iter()
                .filter(|e| e.sm == best)
                .map(|e| entry_text(e))
                .collect::<Result<Vec<_>, _>>()?;
            let specific = |t: &str| {
                t.lines()
                    .find_map(|l| l.trim().strip_prefix(".target"))
                    .and_then(|t| t.split(',').next())
                    .map(|t| t.trim().to_string())
                    .filter(|t| t.ends_with('a'))
            };
            let exact = format!("sm_{sm}a");
            let pick = texts
                .iter()
                .position(|t| specific(t).as_deref() == Some(exact.as_str()))
                .or_else(|| texts.iter().rposition(|t| specific(t).is_none()))
                .unwrap_or(texts.len() - 1);
            Ok(texts[pick].clone())
        }
        None => {
            let mut archs: Vec<u32> = ptx.iter().map(|e| e.sm).collect();
            archs.sort_unstable();
            Err(FatbinError::NoCompatiblePtx { archs, sm })
        }
    }
}
