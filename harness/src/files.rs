//! Reading the files a user names (a case file) without trusting them: only a regular
//! file, of at most a cap. `/dev/zero` given as a case would otherwise be read without
//! end, and a FIFO would block the ordinary open forever.

use std::io::Read;

/// The largest case file: the suite's longest case is a few KiB and a recorded trace
/// turned into a case (trace2case) a few MiB; 16 MiB holds any real one and keeps a
/// mistaken path cheap.
pub const MAX_CASE_BYTES: u64 = 16 << 20;

/// The text of the regular file at `path`, of at most `cap` bytes; a message naming the
/// file otherwise. Opened without blocking and checked on the open descriptor.
pub fn read_regular_file(path: &std::path::Path, cap: u64) -> Result<String, String> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let name = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    let t = meta.file_type();
    if !t.is_file() {
        let kind = if t.is_dir() {
            "directory"
        } else if t.is_char_device() || t.is_block_device() {
            "device"
        } else if t.is_fifo() {
            "FIFO"
        } else {
            "special file"
        };
        return Err(format!("{name} is a {kind}, not a regular file"));
    }
    let too_large = || format!("{name} is larger than {cap} bytes");
    if meta.len() > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|_| format!("{name} is not UTF-8 text"))
}
