//! Taking another process's file descriptor: how cumock's driver (legacy IPC handles)
//! and its runtime (cudaIpc* handles) let another process map the same memory. A handle
//! carries the exporter's pid and the number of the fd of the memory's file in it. The
//! importer takes a duplicate with pidfd_open + pidfd_getfd (Linux 5.6), which the kernel
//! allows when it may ptrace the exporter: the same user, and under Yama's ptrace_scope 1
//! only because the exporter allowed any process of its user to (`allow_fd_taking`).
//! Where pidfd_getfd is refused anyway (a container's seccomp profile often allows it only
//! with CAP_SYS_PTRACE), the importer asks the exporter's fd service: a thread listening
//! on the abstract Unix socket `<service>-<pid>` that sends a duplicate of an exported fd
//! (SCM_RIGHTS) to processes of the same user (SO_PEERCRED). Each library names its own
//! service, so that a process using both the driver and the runtime serves both.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// A duplicate, in this process, of file descriptor `fd` of process `pid`.
pub fn take_fd(pid: i32, fd: i32) -> io::Result<OwnedFd> {
    // Safety: plain system calls on integers; a failure is reported by errno.
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32;
        if pidfd < 0 {
            return Err(io::Error::last_os_error());
        }
        let got = libc::syscall(libc::SYS_pidfd_getfd, pidfd, fd, 0) as i32;
        let err = io::Error::last_os_error();
        libc::close(pidfd);
        if got < 0 {
            Err(err)
        } else {
            Ok(OwnedFd::from_raw_fd(got))
        }
    }
}

/// Lets any process of this user take this process's fds (Yama's ptrace_scope 1 would
/// otherwise allow only its ancestors, and an importer is often a child): what an
/// exporter of IPC handles opts into.
pub fn allow_fd_taking() {
    // Safety: prctl with integer arguments; on a kernel without Yama it fails harmlessly.
    unsafe { libc::prctl(libc::PR_SET_PTRACER, libc::PR_SET_PTRACER_ANY, 0, 0, 0) };
}

pub fn pid() -> i32 {
    // Safety: getpid cannot fail.
    unsafe { libc::getpid() }
}

/// The inode number of an open fd: what tells one exported file from another that later
/// took the same fd number.
pub fn inode(fd: BorrowedFd<'_>) -> io::Result<u64> {
    // Safety: fstat fills a plain struct for an fd we hold open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.st_ino)
}

fn socket_name(service: &str, pid: i32) -> String {
    format!("{service}-{pid}")
}

/// Serves this process's exported fds, as `service`, to other processes of the same user.
/// A client writes an fd number (i32, little endian); if `allowed` says the fd is an
/// exported one, a duplicate comes back as SCM_RIGHTS. Started once per service; failures
/// to start are reported and leave pidfd_getfd only.
pub fn serve_exported_fds(service: &'static str, allowed: fn(i32) -> bool) {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    static STARTED: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut started = STARTED.lock().unwrap_or_else(|e| e.into_inner());
    if started.contains(&service) {
        return;
    }
    started.push(service);
    {
        let listener = SocketAddr::from_abstract_name(socket_name(service, pid()).as_bytes())
            .and_then(|a| UnixListener::bind_addr(&a));
        let listener = match listener {
            Ok(l) => l,
            Err(e) => {
                eprintln!("cumock: IPC fd service not started ({e}); importers need pidfd_getfd");
                return;
            }
        };
        let spawned = std::thread::Builder::new()
            .name("cumock-ipc".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let _ = serve_one(&stream, allowed);
                }
            });
        if let Err(e) = spawned {
            eprintln!("cumock: IPC fd service not started ({e}); importers need pidfd_getfd");
        }
    }
}

fn serve_one(stream: &std::os::unix::net::UnixStream, allowed: fn(i32) -> bool) -> io::Result<()> {
    use std::io::Read;
    // Only processes of this user: the same rule as pidfd_getfd's.
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // Safety: getsockopt fills a ucred of the size given.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    // Safety: getuid cannot fail.
    if r != 0 || cred.uid != unsafe { libc::getuid() } {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    let mut buf = [0u8; 4];
    (&*stream).read_exact(&mut buf)?;
    let fd = i32::from_le_bytes(buf);
    let send = if allowed(fd) { fd } else { -1 };
    send_fd(stream.as_raw_fd(), send)
}

/// Sends one byte, with `fd` attached as SCM_RIGHTS when it is not -1.
fn send_fd(socket: i32, fd: i32) -> io::Result<()> {
    let mut byte = [u8::from(fd >= 0)];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // Safety: CMSG_SPACE is a pure computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // Safety: a zeroed msghdr is valid; the pointers set below outlive the sendmsg call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if fd >= 0 {
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        // Safety: the control buffer holds CMSG_SPACE(one fd) bytes, so the first header
        // and its data fit.
        unsafe {
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<i32>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<i32>(), fd);
        }
    }
    // Safety: msg is fully set up above.
    if unsafe { libc::sendmsg(socket, &msg, 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Asks process `pid`'s fd service `service` for a duplicate of its fd `fd`.
pub fn request_fd(service: &str, pid: i32, fd: i32) -> io::Result<OwnedFd> {
    use std::io::Write;
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixStream};
    let addr = SocketAddr::from_abstract_name(socket_name(service, pid).as_bytes())?;
    let mut stream = UnixStream::connect_addr(&addr)?;
    stream.write_all(&fd.to_le_bytes())?;
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // Safety: a pure computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // Safety: a zeroed msghdr is valid; its buffers outlive the recvmsg call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    // Safety: msg describes live buffers; MSG_CMSG_CLOEXEC marks the received fd.
    if unsafe { libc::recvmsg(stream.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) } < 1 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "no answer from the exporter",
        ));
    }
    if byte[0] != 1 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "the exporter does not export that fd (freed?)",
        ));
    }
    // Safety: recvmsg filled the control buffer; the header is checked before its data is
    // read, and the fd it carries is new in this process and ours.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        if c.is_null() || (*c).cmsg_level != libc::SOL_SOCKET || (*c).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "no fd in the exporter's answer",
            ));
        }
        Ok(OwnedFd::from_raw_fd(std::ptr::read_unaligned(
            libc::CMSG_DATA(c).cast::<i32>(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsFd;
    use std::sync::atomic::{AtomicI32, Ordering};

    /// The one fd the test's service exports.
    static EXPORTED: AtomicI32 = AtomicI32::new(-1);

    fn exported(fd: i32) -> bool {
        fd == EXPORTED.load(Ordering::Relaxed)
    }

    fn memfd_with(text: &[u8]) -> std::fs::File {
        // Safety: memfd_create with a NUL-terminated name; the fd is new and ours.
        let fd = unsafe { libc::memfd_create(c"fd-passing-test".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0, "{}", io::Error::last_os_error());
        // Safety: as above.
        let mut f = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        f.write_all(text).unwrap();
        f
    }

    fn read_all(fd: OwnedFd) -> Vec<u8> {
        let mut f = std::fs::File::from(fd);
        f.rewind().unwrap();
        let mut v = Vec::new();
        f.read_to_end(&mut v).unwrap();
        v
    }

    #[test]
    fn the_service_hands_out_exported_fds_only() {
        let f = memfd_with(b"shared bytes");
        let other = memfd_with(b"private");
        EXPORTED.store(f.as_raw_fd(), Ordering::Relaxed);
        serve_exported_fds("cumock-fd-passing-test", exported);
        // Twice is once.
        serve_exported_fds("cumock-fd-passing-test", exported);
        let dup = request_fd("cumock-fd-passing-test", pid(), f.as_raw_fd()).unwrap();
        assert_eq!(inode(dup.as_fd()).unwrap(), inode(f.as_fd()).unwrap());
        assert_eq!(read_all(dup), b"shared bytes");
        let refused = request_fd("cumock-fd-passing-test", pid(), other.as_raw_fd());
        assert_eq!(refused.unwrap_err().kind(), io::ErrorKind::NotFound);
        assert!(request_fd("cumock-no-such-service", pid(), f.as_raw_fd()).is_err());
    }

    #[test]
    fn pidfd_getfd_takes_a_duplicate_where_the_kernel_allows_it() {
        let f = memfd_with(b"taken");
        allow_fd_taking();
        match take_fd(pid(), f.as_raw_fd()) {
            Ok(dup) => assert_eq!(read_all(dup), b"taken"),
            // Kernels before 5.6 and seccomp profiles refuse it: what the service is for.
            Err(e) => eprintln!("pidfd_getfd refused here: {e}"),
        }
    }
}
