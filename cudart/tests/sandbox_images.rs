//! Issue 19, "a sandbox that holds", in cumock's runtime: `__cudaRegisterFatBinary` given
//! a wrapper whose fatbin pointer points to itself, two wrappers pointing at each other,
//! and a wild pointer. Each is refused at registration with a message, and a launch of a
//! kernel registered with it fails (its fatbin is not registered): no endless loop,
//! no fault. The program runs under a deadline and a memory limit, so that a regression
//! fails the test instead of hanging it.

mod common;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

const PROGRAM: &str = r#"
#include <stdio.h>
struct wrapper { int magic, version; const void *data; void *rest; };
struct dim3 { unsigned x, y, z; };
extern void **__cudaRegisterFatBinary(void *);
extern void __cudaRegisterFunction(void **, const char *, char *, const char *, int,
                                   void *, void *, void *, void *, int *);
extern int cudaLaunchKernel(const void *, struct dim3, struct dim3, void **, size_t, void *);
static void stub_self(void) {}
static void stub_pair(void) {}
int main(void) {
    struct wrapper self = {0x466243b1, 1, 0, 0};
    self.data = &self;
    struct wrapper a = {0x466243b1, 1, 0, 0}, b = {0x466243b1, 1, &a, 0};
    a.data = &b;
    void **h_self = __cudaRegisterFatBinary(&self);
    void **h_pair = __cudaRegisterFatBinary(&a);
    void **h_wild = __cudaRegisterFatBinary((void *)0x10);
    __cudaRegisterFunction(h_self, (const char *)stub_self, "k", "k", -1, 0, 0, 0, 0, 0);
    __cudaRegisterFunction(h_pair, (const char *)stub_pair, "k", "k", -1, 0, 0, 0, 0, 0);
    struct dim3 one = {1, 1, 1};
    printf("handles %s %s %s\n", h_self ? "set" : "null", h_pair ? "set" : "null",
           h_wild ? "set" : "null");
    printf("launch self = %d\n", cudaLaunchKernel((const void *)stub_self, one, one, 0, 0, 0));
    printf("launch pair = %d\n", cudaLaunchKernel((const void *)stub_pair, one, one, 0, 0, 0));
    return 0;
}
"#;

#[test]
fn wrapper_cycles_and_wild_wrappers_are_refused_at_registration() {
    let dir = common::scratch(&format!("sandbox-images-{}", std::process::id()));
    let src = dir.join("wrappers.c");
    let exe = dir.join("wrappers");
    std::fs::write(&src, PROGRAM).unwrap();
    let lib = common::lib_dir();
    let cc = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg("-lcudart")
        .output()
        .expect("running the C compiler");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let mut cmd = common::on_mock(&exe);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // Safety: setrlimit is async-signal-safe and the closure touches nothing else.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 512 << 20,
                rlim_max: 512 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the program still runs after 60 s: a wrapper cycle followed without end?");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{status}\n{out}\n{err}");
    assert!(out.contains("handles null null null"), "{out}\n{err}");
    // The kernels' fatbins were never registered: their launches fail (the runtime's
    // code for that, cudaErrorInvalidResourceHandle), and nothing follows the wrappers.
    assert!(out.contains("launch self = 400"), "{out}\n{err}");
    assert!(out.contains("launch pair = 400"), "{out}\n{err}");
    assert!(err.contains("points to the wrapper itself"), "{err}");
    assert!(
        err.contains("has magic 0x466243b1, not a fatbin's"),
        "{err}"
    );
    assert!(
        err.contains("the fatbin wrapper at 0x10 is not readable"),
        "{err}"
    );
}
