//! Handing a file descriptor to another process that proves it holds an IPC handle: how
//! cumock's driver (legacy IPC handles) and its runtime (cudaIpc* handles) let another
//! process map the same memory.
//!
//! A handle names the exporter (its pid), the export (the number of the memory file's fd
//! in the exporter) and carries a random secret made for that export (`Secret::new`, 128
//! bits from the kernel's RNG). The pid and fd number are public (anyone reads them in
//! `/proc`); the secret is known only to the exporter and to whoever it gave the handle.
//!
//! The only way to the fd is the exporter's **fd service**: a thread listening on the
//! abstract Unix socket `<service>-<pid>`. The importer connects, sends the fd number and
//! the secret; the exporter looks the export up, compares the secret in constant time, and
//! only then sends a duplicate of the fd (SCM_RIGHTS). Each library names its own service,
//! so that a process using both the driver and the runtime serves both.
//!
//! Why not `pidfd_getfd` (which an earlier version tried first): the kernel lets it take
//! *any* fd of a process its caller may ptrace, so it cannot check a secret, and it would
//! also reach fds the exporter never exported as IPC handles (VMM memory exported with
//! cuMemExportToShareableHandle for someone else). Under Yama's ptrace_scope 1 it worked
//! only because the exporter let every process of its user ptrace it (PR_SET_PTRACER_ANY),
//! which hands out far more than memory. So the exporter widens nothing: a process that
//! could already ptrace it (the kernel's rule, outside cumock's reach) still can, but
//! cumock's own import path always goes through the exporter's check. The same holds for
//! `/proc/<pid>/fd/<n>`, which the kernel lets a process of the same user open while the
//! exporter is dumpable (Yama does not restrict it): hiding the mock's memory files from it
//! would take keeping them off the fd table or making the host program non-dumpable, which
//! a library should not decide for it.
//!
//! The service is made to be reached by strangers: both ends check who the other is
//! (SO_PEERCRED: the same user; the importer also that the socket is the exporter's own pid,
//! since anyone can bind an abstract name first), every connection gets a thread of its own
//! with a deadline (a client that sends nothing is dropped after `CLIENT_DEADLINE` and
//! delays nobody), and at most `MAX_CLIENTS` are served at once (more are told "busy", and
//! the importer retries until its own deadline).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a client of the fd service has to send its request.
pub const CLIENT_DEADLINE: Duration = Duration::from_secs(2);

/// How many clients the fd service serves at once (a thread each).
pub const MAX_CLIENTS: usize = 64;

/// How long an importer waits for an answer (retrying while the exporter is busy).
const IMPORT_DEADLINE: Duration = Duration::from_secs(5);

/// The length of a secret, in bytes.
pub const SECRET_LEN: usize = 16;

/// What an importer sends: the fd number (i32, little endian), then the secret.
const REQUEST_LEN: usize = 4 + SECRET_LEN;

/// The answer's one byte of data.
const ANSWER_REFUSED: u8 = 0;
const ANSWER_FD: u8 = 1;
const ANSWER_BUSY: u8 = 2;

/// A random secret, made for one export.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Secret(pub [u8; SECRET_LEN]);

impl std::fmt::Debug for Secret {
    // Not printed: a secret in a log is a secret handed out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// 128 bits from the kernel's RNG (getrandom(2), which blocks only until the pool is
    /// first seeded).
    pub fn new() -> io::Result<Self> {
        let mut b = [0u8; SECRET_LEN];
        let mut filled = 0;
        while filled < b.len() {
            // Safety: getrandom writes at most the length given into the buffer's rest.
            let n =
                unsafe { libc::getrandom(b[filled..].as_mut_ptr().cast(), b.len() - filled, 0) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            filled += n as usize;
        }
        Ok(Self(b))
    }

    /// Equality in time that does not depend on where the first differing byte is, so
    /// that timing the service's answers tells nothing of the secret.
    pub fn matches(&self, other: &Secret) -> bool {
        let diff = self
            .0
            .iter()
            .zip(other.0.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(diff) == 0
    }
}

/// An export as the fd service's lookup gives it: a duplicate of the fd (made under the
/// exporter's lock, so a concurrent free cannot close it before it is sent) and the
/// secret a handle of it must carry.
pub struct Export {
    pub fd: OwnedFd,
    pub secret: Secret,
}

/// What the service asks its library: the export whose fd has this number, if any.
pub type Lookup = fn(i32) -> Option<Export>;

pub fn pid() -> i32 {
    // Safety: getpid cannot fail.
    unsafe { libc::getpid() }
}

fn uid() -> u32 {
    // Safety: getuid cannot fail.
    unsafe { libc::getuid() }
}

/// The inode number of an open fd: what tells one exported file from another that later
/// took the same fd number.
pub fn inode(fd: BorrowedFd<'_>) -> io::Result<u64> {
    Ok(stat(fd)?.st_ino)
}

/// The size of the file behind an open fd.
pub fn file_size(fd: BorrowedFd<'_>) -> io::Result<u64> {
    Ok(stat(fd)?.st_size as u64)
}

fn stat(fd: BorrowedFd<'_>) -> io::Result<libc::stat> {
    // Safety: fstat fills a plain struct for an fd we hold open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

fn socket_name(service: &str, pid: i32) -> String {
    format!("{service}-{pid}")
}

/// The credentials of the process at the other end of a Unix socket.
fn peer(stream: &UnixStream) -> io::Result<libc::ucred> {
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
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cred)
}

/// Starts serving this process's exports, as `service` (once per service and process: a
/// forked child that exports starts its own, under its own pid). An error means no
/// importer can reach this process's exports, which the caller reports as a failed export.
pub fn serve_exported_fds(service: &'static str, lookup: Lookup) -> io::Result<()> {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    static STARTED: std::sync::Mutex<Vec<(&'static str, i32)>> = std::sync::Mutex::new(Vec::new());
    let mut started = STARTED.lock().unwrap_or_else(|e| e.into_inner());
    let me = pid();
    if started.contains(&(service, me)) {
        return Ok(());
    }
    // A name already bound (by a process that guessed it) fails here: the export fails
    // rather than the importers talking to a stranger.
    let listener = SocketAddr::from_abstract_name(socket_name(service, me).as_bytes())
        .and_then(|a| UnixListener::bind_addr(&a))?;
    std::thread::Builder::new()
        .name("cumock-ipc".into())
        .spawn(move || accept_loop(listener, lookup))?;
    started.push((service, me));
    Ok(())
}

/// How many clients are being served now.
static SERVING: AtomicUsize = AtomicUsize::new(0);

/// One client served: counts itself in `SERVING` while it lives.
struct Serving;

impl Drop for Serving {
    fn drop(&mut self) {
        SERVING.fetch_sub(1, Ordering::AcqRel);
    }
}

fn accept_loop(listener: std::os::unix::net::UnixListener, lookup: Lookup) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            // EMFILE and the like: give the process a moment rather than spin.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if SERVING.fetch_add(1, Ordering::AcqRel) >= MAX_CLIENTS {
            SERVING.fetch_sub(1, Ordering::AcqRel);
            // A fresh socket's buffer takes one byte without blocking.
            let _ = send_answer(stream.as_raw_fd(), ANSWER_BUSY, None, libc::MSG_DONTWAIT);
            continue;
        }
        let guard = Serving;
        let spawned = std::thread::Builder::new()
            .name("cumock-ipc-client".into())
            .spawn(move || {
                let _guard = guard;
                let _ = serve_one(&stream, lookup);
            });
        // A thread that could not start dropped the stream and the guard with it.
        drop(spawned);
    }
}

fn serve_one(stream: &UnixStream, lookup: Lookup) -> io::Result<()> {
    let deadline = Instant::now() + CLIENT_DEADLINE;
    // Only processes of this user: what the handle's secret is checked for on top.
    if peer(stream)?.uid != uid() {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    let mut request = [0u8; REQUEST_LEN];
    read_before(stream, &mut request, deadline)?;
    let fd = i32::from_le_bytes(request[..4].try_into().expect("4 bytes"));
    let secret = Secret(request[4..].try_into().expect("SECRET_LEN bytes"));
    stream.set_write_timeout(Some(CLIENT_DEADLINE))?;
    match lookup(fd) {
        Some(export) if export.secret.matches(&secret) => send_answer(
            stream.as_raw_fd(),
            ANSWER_FD,
            Some(export.fd.as_raw_fd()),
            0,
        ),
        // No such export, or not this secret: the same answer, so that the service tells
        // a guesser nothing about which fds are exported.
        _ => send_answer(stream.as_raw_fd(), ANSWER_REFUSED, None, 0),
    }
}

/// Fills `buf` from `stream` before `deadline`, however the client spaces its bytes.
fn read_before(stream: &UnixStream, buf: &mut [u8], deadline: Instant) -> io::Result<()> {
    use std::io::Read;
    let mut got = 0;
    while got < buf.len() {
        let left = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| io::Error::from(io::ErrorKind::TimedOut))?;
        stream.set_read_timeout(Some(left))?;
        match (&*stream).read(&mut buf[got..]) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Sends one byte, with `fd` attached as SCM_RIGHTS when there is one.
fn send_answer(socket: i32, answer: u8, fd: Option<i32>, flags: i32) -> io::Result<()> {
    let mut byte = [answer];
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
    if let Some(fd) = fd {
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
    // Safety: msg is fully set up above; MSG_NOSIGNAL: a client gone is an error, not
    // SIGPIPE for the exporter.
    if unsafe { libc::sendmsg(socket, &msg, flags | libc::MSG_NOSIGNAL) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends all of `bytes`; MSG_NOSIGNAL: an exporter gone is an error for the importer, not
/// SIGPIPE (a C program's default action for it is to die).
fn send_all(stream: &UnixStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        // Safety: send reads at most the length given from a live buffer.
        let n = unsafe {
            libc::send(
                stream.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// Why a request got no fd.
fn refused(kind: io::ErrorKind, why: &str) -> io::Error {
    io::Error::new(kind, why.to_owned())
}

/// Asks process `pid`'s fd service `service` for a duplicate of its fd `fd`, proving the
/// handle with `secret`. Retries while the exporter is busy, up to a deadline of its own.
pub fn request_fd(service: &str, pid: i32, fd: i32, secret: &Secret) -> io::Result<OwnedFd> {
    let deadline = Instant::now() + IMPORT_DEADLINE;
    loop {
        match request_once(service, pid, fd, secret, deadline)? {
            Some(fd) => return Ok(fd),
            None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            None => {
                return Err(refused(
                    io::ErrorKind::TimedOut,
                    "the exporter's fd service stayed busy",
                ))
            }
        }
    }
}

/// One request: the fd, or None when the service said it is busy.
fn request_once(
    service: &str,
    pid: i32,
    fd: i32,
    secret: &Secret,
    deadline: Instant,
) -> io::Result<Option<OwnedFd>> {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::SocketAddr;
    if pid <= 0 {
        return Err(refused(io::ErrorKind::InvalidInput, "no such process"));
    }
    let addr = SocketAddr::from_abstract_name(socket_name(service, pid).as_bytes())?;
    let stream = UnixStream::connect_addr(&addr)?;
    // The secret goes only to the process the handle names, of this user: anyone may have
    // bound the name first.
    let cred = peer(&stream)?;
    if cred.pid != pid || cred.uid != uid() {
        return Err(refused(
            io::ErrorKind::PermissionDenied,
            "the socket is not the exporter's own",
        ));
    }
    let left = deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| io::Error::from(io::ErrorKind::TimedOut))?;
    stream.set_read_timeout(Some(left))?;
    stream.set_write_timeout(Some(left))?;
    let mut request = [0u8; REQUEST_LEN];
    request[..4].copy_from_slice(&fd.to_le_bytes());
    request[4..].copy_from_slice(&secret.0);
    // A service that answered "busy" before reading has closed its end: its answer is
    // still there to read, so a failed send is judged after the answer.
    let sent = send_all(&stream, &request);
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
        sent?;
        return Err(refused(
            io::ErrorKind::UnexpectedEof,
            "no answer from the exporter",
        ));
    }
    // Safety: recvmsg filled the control buffer; the header is checked before its data is
    // read, and the fd it carries is new in this process and ours (taken before anything
    // else is decided, so that it is closed on every path).
    let received = unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        if !c.is_null() && (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS
        {
            Some(OwnedFd::from_raw_fd(std::ptr::read_unaligned(
                libc::CMSG_DATA(c).cast::<i32>(),
            )))
        } else {
            None
        }
    };
    match (byte[0], received) {
        (ANSWER_FD, Some(fd)) => Ok(Some(fd)),
        (ANSWER_BUSY, _) => Ok(None),
        (ANSWER_FD, None) => Err(refused(
            io::ErrorKind::InvalidData,
            "no fd in the exporter's answer",
        )),
        _ => Err(refused(
            io::ErrorKind::NotFound,
            "the exporter refused: no such export (freed?) or not this handle's secret",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsFd;
    use std::sync::Mutex;

    /// The test service's one export.
    static EXPORTED: Mutex<Option<(std::fs::File, Secret)>> = Mutex::new(None);

    fn lookup(fd: i32) -> Option<Export> {
        let e = EXPORTED.lock().unwrap();
        let (f, secret) = e.as_ref()?;
        (f.as_raw_fd() == fd).then(|| Export {
            fd: f.as_fd().try_clone_to_owned().unwrap(),
            secret: *secret,
        })
    }

    const SERVICE: &str = "cumock-fd-passing-test";

    /// Exports one memfd with a fresh secret and starts the service: (fd number, secret).
    fn export(text: &[u8]) -> (i32, Secret) {
        let f = memfd_with(text);
        let secret = Secret::new().unwrap();
        let fd = f.as_raw_fd();
        *EXPORTED.lock().unwrap() = Some((f, secret));
        serve_exported_fds(SERVICE, lookup).unwrap();
        (fd, secret)
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

    /// Runs `f` on a thread of its own and fails the test if it takes longer than `limit`
    /// (a hang is a failure, not a stuck test run).
    fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(limit)
            .unwrap_or_else(|e| panic!("did not finish within {limit:?}: {e}"))
    }

    /// The tests share one service and one export slot: one at a time.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    #[test]
    fn the_service_hands_out_an_export_to_its_secret_only() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        within(Duration::from_secs(20), || {
            let other = memfd_with(b"private");
            let (fd, secret) = export(b"shared bytes");
            // Twice is once.
            serve_exported_fds(SERVICE, lookup).unwrap();
            let dup = request_fd(SERVICE, pid(), fd, &secret).unwrap();
            assert_eq!(read_all(dup), b"shared bytes");
            let mut wrong = secret;
            for i in [0, SECRET_LEN - 1] {
                wrong.0[i] ^= 1;
                let e = request_fd(SERVICE, pid(), fd, &wrong).unwrap_err();
                assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
                wrong.0[i] ^= 1;
            }
            // Another fd of this process, even with the export's secret.
            let e = request_fd(SERVICE, pid(), other.as_raw_fd(), &secret).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
            assert!(request_fd("cumock-no-such-service", pid(), fd, &secret).is_err());
            assert!(request_fd(SERVICE, 0, fd, &secret).is_err());
        });
    }

    #[test]
    fn secrets_are_fresh_and_compared_whole() {
        let a = Secret::new().unwrap();
        let b = Secret::new().unwrap();
        assert_ne!(a.0, b.0);
        assert!(a.matches(&a));
        assert!(!a.matches(&b));
        assert_eq!(format!("{a:?}"), "Secret(..)");
    }

    #[test]
    fn a_client_that_sends_nothing_delays_nobody_and_is_dropped() {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::SocketAddr;
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        within(Duration::from_secs(20), || {
            let (fd, secret) = export(b"served anyway");
            let addr =
                SocketAddr::from_abstract_name(socket_name(SERVICE, pid()).as_bytes()).unwrap();
            let stalled: Vec<UnixStream> = (0..8)
                .map(|_| UnixStream::connect_addr(&addr).unwrap())
                .collect();
            // Half a request from one of them, too.
            (&stalled[0]).write_all(&[1, 2]).unwrap();
            let start = Instant::now();
            let dup = request_fd(SERVICE, pid(), fd, &secret).unwrap();
            let took = start.elapsed();
            assert_eq!(read_all(dup), b"served anyway");
            assert!(
                took < Duration::from_millis(500),
                "a real import took {took:?}"
            );
            // The stalled ones are closed by the service after its deadline.
            for mut s in stalled {
                s.set_read_timeout(Some(CLIENT_DEADLINE * 3)).unwrap();
                let mut b = [0u8; 1];
                let start = Instant::now();
                assert_eq!(
                    s.read(&mut b).unwrap(),
                    0,
                    "the service closes the connection"
                );
                assert!(start.elapsed() < CLIENT_DEADLINE + Duration::from_secs(1));
            }
        });
    }

    #[test]
    fn a_full_service_says_busy_and_the_importer_gets_its_fd_once_a_slot_frees() {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::SocketAddr;
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        within(Duration::from_secs(20), || {
            let (fd, secret) = export(b"after the crowd");
            let addr =
                SocketAddr::from_abstract_name(socket_name(SERVICE, pid()).as_bytes()).unwrap();
            let crowd: Vec<UnixStream> = (0..MAX_CLIENTS)
                .map(|_| UnixStream::connect_addr(&addr).unwrap())
                .collect();
            // Every slot taken: the next client hears "busy" at once.
            let extra = UnixStream::connect_addr(&addr).unwrap();
            extra
                .set_read_timeout(Some(Duration::from_secs(1)))
                .unwrap();
            let mut b = [0u8; 1];
            assert_eq!((&extra).read(&mut b).unwrap(), 1);
            assert_eq!(b[0], ANSWER_BUSY);
            let start = Instant::now();
            let dup = request_fd(SERVICE, pid(), fd, &secret).unwrap();
            let took = start.elapsed();
            assert_eq!(read_all(dup), b"after the crowd");
            assert!(
                took < CLIENT_DEADLINE + Duration::from_secs(1),
                "took {took:?}"
            );
            drop(crowd);
        });
    }
}
