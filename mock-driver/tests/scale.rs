//! A full device of allocations under ordinary host limits (issue 15): the mock's host
//! fds and mappings must not grow with the number of allocations, and host memory must
//! follow the pages touched, not the bytes allocated.
//!
//! Each test runs in a child process of its own (this binary, re-run on that one test),
//! so that what it measures of the process (open fds, mappings, resident memory) is its
//! own and not its neighbours', and so that a lowered fd limit stays there.

use cuda::model::ids::DevicePtr;
use cuda::model::profile::Profile;
use cuda::model::vmm::{AllocationProp, Need};
use cuda::model::{Driver, HostBytes, HostOrDevice};
use cumock_abi::result::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const G: u64 = 2 << 20;
const ROLE: &str = "CUMOCK_SCALE_ROLE";

/// Runs `test` (this file's test of that name) in a child process with `ROLE=role`, and
/// fails with its output if it fails.
fn in_child(test: &str, role: &str) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{test} in a child: {}\n{text}",
        out.status
    );
    // What the child measured, for the CI log.
    for l in text
        .lines()
        .filter_map(|l| l.find("scale:").map(|at| &l[at..]))
    {
        eprintln!("{l}");
    }
}

fn role() -> Option<String> {
    std::env::var(ROLE).ok()
}

fn prop(d: &Driver, device: i32, exportable: bool) -> AllocationProp {
    let mut p = cumock_abi::CUmemAllocationProp {
        type_: 1,
        ..Default::default()
    };
    p.location = cumock_abi::CUmemLocation {
        type_: 1,
        id: device,
    };
    p.requested_handle_types = i32::from(exportable);
    d.check_prop(&p).unwrap()
}

fn driver(devices: usize) -> Driver {
    let d = Driver::new(Profile::builtin_with_devices(devices).unwrap());
    d.init(0).unwrap();
    d
}

fn current(d: &Driver, device: i32) {
    let ctx = d.primary_retain(device).unwrap();
    d.ctx_set_current(Some(ctx)).unwrap();
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn host_mappings() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .count()
}

/// Resident shared memory of this process in bytes: the mock's device memory is memfd
/// pages, so this is what the device memory costs the host.
fn rss_shmem() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("RssShmem:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .expect("RssShmem in /proc/self/status")
        * 1024
}

fn pattern(seed: u64) -> [u8; 4096] {
    let mut b = [0u8; 4096];
    for (i, x) in b.iter_mut().enumerate() {
        *x = (seed as u8).wrapping_mul(29).wrapping_add(i as u8) ^ (seed >> 8) as u8;
    }
    b
}

fn write(d: &Driver, at: DevicePtr, bytes: &[u8]) {
    d.copy(
        HostOrDevice::Device(at),
        HostOrDevice::Host(HostBytes::from_slice(bytes)),
        bytes.len() as u64,
    )
    .unwrap();
}

fn read(d: &Driver, at: DevicePtr, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    d.copy(
        HostOrDevice::Host(HostBytes::from_mut_slice(&mut b)),
        HostOrDevice::Device(at),
        len as u64,
    )
    .unwrap();
    b
}

// ---------------------------------------------------------------------------------------

#[test]
fn ten_thousand_exported_allocations_under_a_limit_of_1024_open_files() {
    match role().as_deref() {
        Some("exporter") => return exporter(),
        Some("importer") => return importer(),
        _ => {}
    }
    in_child(
        "ten_thousand_exported_allocations_under_a_limit_of_1024_open_files",
        "exporter",
    );
}

/// 10,000 exportable 2 MiB allocations, one by one: created, mapped, written, exported,
/// imported and checked by a second process, released. The fd limit is the common soft
/// limit, 1,024; the mock used to hold an fd per exportable allocation.
fn exporter() {
    let limit = libc::rlimit {
        rlim_cur: 1024,
        rlim_max: 1024,
    };
    // Safety: setrlimit reads a plain struct.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    let d = driver(1);
    current(&d, 0);
    let mut importer = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "ten_thousand_exported_allocations_under_a_limit_of_1024_open_files",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, "importer")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = importer.stdin.take().unwrap();
    let mut from = BufReader::new(importer.stdout.take().unwrap());
    let va = d.address_reserve(G, 0, DevicePtr::NULL, 0).unwrap();
    let p = prop(&d, 0, true);
    // The mock's arena exists from the first allocation on: counted in "before".
    d.release(d.create(G, p, 0).unwrap()).unwrap();
    let fds_before = open_fds();
    let maps_before = host_mappings();
    let mut peak_fds = 0;
    const N: u64 = 10_000;
    for i in 0..N {
        let h = d.create(G, p, 0).unwrap();
        d.map(va, G, 0, h, 0).unwrap();
        d.set_access(va, G, &[(1, 0, 3)]).unwrap();
        write(&d, va + (i % 512) * 4096, &pattern(i));
        let fd = d.export(h, 1, 0).unwrap();
        peak_fds = peak_fds.max(open_fds());
        use std::os::fd::AsRawFd;
        writeln!(to, "{} {} {i}", std::process::id(), fd.as_raw_fd()).unwrap();
        to.flush().unwrap();
        // The importer wrote the next page: the memory is shared, both ways.
        assert_eq!(answer(&mut from), "ok", "allocation {i}");
        let page = (i % 512 + 1) % 512;
        assert_eq!(
            read(&d, va + page * 4096, 4096),
            pattern(i + N),
            "allocation {i}: the importer's write is not seen here"
        );
        drop(fd);
        d.ctx_synchronize(None).unwrap();
        d.unmap(va, G).unwrap();
        d.release(h).unwrap();
    }
    d.address_free(va, G).unwrap();
    let fds_after = open_fds();
    let maps_after = host_mappings();
    drop(to);
    let last = answer(&mut from);
    assert!(importer.wait().unwrap().success());
    println!(
        "scale: {N} exported allocations under RLIMIT_NOFILE 1024: fds {fds_before} before, \
         at most {peak_fds} during, {fds_after} after; host mappings {maps_before} before, \
         {maps_after} after; importer: {}",
        last
    );
    assert_eq!(fds_after, fds_before, "an fd leaked");
    // The exported fd, and the mock's own of the exported file while it lives.
    assert!(peak_fds <= fds_before + 2, "{peak_fds} fds at the peak");
    assert!(
        maps_after <= maps_before + 4,
        "{maps_after} host mappings after"
    );
    assert!(last.starts_with("importer fds leaked 0"), "{last}");
}

/// The second process: imports each fd it is told of (through /proc, as a pidfd or a
/// Unix socket would hand it over), checks what the exporter wrote, writes the next page.
fn importer() {
    let d = driver(1);
    current(&d, 0);
    let va = d.address_reserve(G, 0, DevicePtr::NULL, 0).unwrap();
    let fds_before = open_fds();
    let out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let v: Vec<u64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        let (pid, fd, i) = (v[0], v[1], v[2]);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/{pid}/fd/{fd}"))
            .unwrap();
        use std::os::fd::AsRawFd;
        let h = d.import(file.as_raw_fd(), 1).unwrap();
        drop(file);
        d.map(va, G, 0, h, 0).unwrap();
        d.set_access(va, G, &[(1, 0, 3)]).unwrap();
        let page = i % 512;
        let ok = read(&d, va + page * 4096, 4096) == pattern(i);
        write(&d, va + ((page + 1) % 512) * 4096, &pattern(i + 10_000));
        d.ctx_synchronize(None).unwrap();
        d.unmap(va, G).unwrap();
        d.release(h).unwrap();
        let mut o = out.lock();
        writeln!(o, "answer {}", if ok { "ok" } else { "data differs" }).unwrap();
        o.flush().unwrap();
    }
    let leaked = open_fds() as i64 - fds_before as i64;
    println!("answer importer fds leaked {leaked}");
}

/// The importer's next answer: what follows "answer " on its stdout (the test harness
/// prints its own text there too).
fn answer(from: &mut impl BufRead) -> String {
    loop {
        let mut line = String::new();
        assert!(from.read_line(&mut line).unwrap() > 0, "the importer ended");
        // libtest's "test NAME ... " has no newline until the test ends.
        if let Some(at) = line.find("answer ") {
            return line[at + "answer ".len()..].trim().to_owned();
        }
    }
}

// ---------------------------------------------------------------------------------------

#[test]
fn a_full_h200_of_2_mib_allocations_until_the_drivers_own_out_of_memory() {
    if role().is_some() {
        return full_device();
    }
    in_child(
        "a_full_h200_of_2_mib_allocations_until_the_drivers_own_out_of_memory",
        "full",
    );
}

/// The default profile filled with 2 MiB allocations (every other one exportable, as
/// PyTorch's expandable segments ask), each mapped and granted, one in 64 written: the
/// driver's out-of-memory comes at the profile's free memory, as on the real H200, and
/// the host holds the pages written, not 141 GB.
fn full_device() {
    let d = driver(1);
    current(&d, 0);
    let (free, _) = d.mem_info().unwrap();
    let expected = free / G;
    let fds0 = open_fds();
    let maps0 = host_mappings();
    let shmem0 = rss_shmem();
    let va = d
        .address_reserve((expected + 1) * G, 0, DevicePtr::NULL, 0)
        .unwrap();
    let props = [prop(&d, 0, false), prop(&d, 0, true)];
    let mut handles = Vec::new();
    let oom = loop {
        let i = handles.len() as u64;
        match d.create(G, props[(i % 2) as usize], 0) {
            Ok(h) => {
                d.map(va + i * G, G, 0, h, 0).unwrap();
                handles.push(h);
            }
            Err(e) => break e,
        }
    };
    let n = handles.len() as u64;
    assert_eq!(oom.code, CUDA_ERROR_OUT_OF_MEMORY, "{}", oom.message);
    assert_eq!(n, expected, "allocations before out-of-memory");
    d.set_access(va, n * G, &[(1, 0, 3)]).unwrap();
    for i in (0..n).step_by(64) {
        write(&d, va + i * G + 8192, &pattern(i));
    }
    let touched = n.div_ceil(64) * 4096;
    let shmem_full = rss_shmem() - shmem0;
    let fds_full = open_fds();
    let maps_full = host_mappings();
    for i in (0..n).step_by(64 * 97) {
        assert_eq!(read(&d, va + i * G + 8192, 4096), pattern(i));
    }
    assert_eq!(d.mem_info().unwrap().0, free - n * G);
    d.unmap(va, n * G).unwrap();
    for h in handles {
        d.release(h).unwrap();
    }
    d.address_free(va, (expected + 1) * G).unwrap();
    let shmem_after = rss_shmem().saturating_sub(shmem0);
    println!(
        "scale: a full H200: {n} allocations of 2 MiB ({} GiB), {} KiB touched; host: \
         {} KiB of shared memory resident, fds {fds0} -> {fds_full}, mappings {maps0} -> \
         {maps_full}; after release: {} KiB resident, free memory back to {} GiB",
        (n * G) >> 30,
        touched >> 10,
        shmem_full >> 10,
        shmem_after >> 10,
        d.mem_info().unwrap().0 >> 30
    );
    // The touched pages, and little more (a page-table's worth of slack).
    assert!(
        shmem_full >= touched,
        "{shmem_full} resident < {touched} touched"
    );
    assert!(
        shmem_full <= touched + (4 << 20),
        "{shmem_full} bytes resident for {touched} touched"
    );
    assert!(shmem_after <= 1 << 20, "{shmem_after} bytes still resident");
    assert!(fds_full <= fds0 + 4, "fds {fds0} -> {fds_full}");
    assert!(maps_full <= maps0 + 8, "mappings {maps0} -> {maps_full}");
    assert_eq!(d.mem_info().unwrap().0, free);
}

// ---------------------------------------------------------------------------------------

#[test]
fn eight_devices_hold_half_a_million_live_allocations() {
    if role().is_some() {
        return eight_devices();
    }
    in_child(
        "eight_devices_hold_half_a_million_live_allocations",
        "eight",
    );
}

fn eight_devices() {
    const DEVICES: u64 = 8;
    const PER_DEVICE: u64 = 62_500;
    let d = driver(DEVICES as usize);
    let fds0 = open_fds();
    let maps0 = host_mappings();
    let t = std::time::Instant::now();
    let mut live = Vec::new();
    for dev in 0..DEVICES {
        let va = d
            .address_reserve(PER_DEVICE * G, 0, DevicePtr::NULL, 0)
            .unwrap();
        let p = prop(&d, dev as i32, dev % 2 == 1);
        for i in 0..PER_DEVICE {
            let h = d.create(G, p, 0).unwrap();
            d.map(va + i * G, G, 0, h, 0).unwrap();
            live.push(h);
        }
        d.set_access(va, PER_DEVICE * G, &[(1, dev as i32, 3)])
            .unwrap();
        // A page at each end of the device's range, through the device's own context.
        current(&d, dev as i32);
        write(&d, va, &pattern(dev));
        write(&d, va + PER_DEVICE * G - 4096, &pattern(dev + 100));
        assert_eq!(read(&d, va, 4096), pattern(dev));
        assert!(
            d.translate(va, 8, ((dev + 1) % DEVICES) as usize, Need::Read)
                .is_err(),
            "another device has no access"
        );
    }
    let made = t.elapsed();
    let fds = open_fds();
    let maps = host_mappings();
    let n = live.len();
    for h in live {
        d.release(h).unwrap();
    }
    println!(
        "scale: {DEVICES} devices, {n} live allocations (each mapped) made in {:.1} s; host \
         fds {fds0} -> {fds}, mappings {maps0} -> {maps}",
        made.as_secs_f64()
    );
    assert!(n >= 500_000);
    assert!(fds <= fds0 + 16, "fds {fds0} -> {fds}");
    assert!(maps <= maps0 + 32, "mappings {maps0} -> {maps}");
}

// ---------------------------------------------------------------------------------------

#[test]
fn out_of_open_files_the_error_names_the_limit() {
    if role().is_some() {
        return out_of_files();
    }
    in_child("out_of_open_files_the_error_names_the_limit", "nofile");
}

/// With every fd the process may open in use, an export cannot make its file: the error
/// is the driver's out-of-memory, and the message says which host limit and how to raise
/// it. Allocations that are not exported need no fd at all.
fn out_of_files() {
    let d = driver(1);
    current(&d, 0);
    let p = prop(&d, 0, true);
    let h = d.create(G, p, 0).unwrap();
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // Safety: getrlimit and setrlimit read and write a plain struct.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = open_fds() as u64 + 8;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    // Every fd the limit leaves, taken.
    let mut taken = Vec::new();
    while let Ok(f) = std::fs::File::open("/dev/null") {
        taken.push(f);
    }
    let more: Vec<u64> = (0..1000).map(|_| d.create(G, p, 0).unwrap()).collect();
    let e = d.export(h, 1, 0).unwrap_err();
    println!("scale: export with no fd left: {}", e.message);
    assert_eq!(e.code, CUDA_ERROR_OUT_OF_MEMORY);
    assert!(
        e.message.contains("RLIMIT_NOFILE") && e.message.contains("ulimit -n"),
        "{}",
        e.message
    );
    drop(taken);
    drop(d.export(h, 1, 0).unwrap());
    for x in more {
        d.release(x).unwrap();
    }
    d.release(h).unwrap();
}

// ---------------------------------------------------------------------------------------

#[test]
fn the_host_faults_on_device_addresses_reserved_mapped_or_freed() {
    use std::os::unix::process::ExitStatusExt;
    if let Some(r) = role() {
        return touch(&r);
    }
    for what in ["reserved", "mapped", "freed"] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "the_host_faults_on_device_addresses_reserved_mapped_or_freed",
                "--nocapture",
            ])
            .env(ROLE, what)
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGSEGV),
            "a host read of a {what} device address: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Reservations are carved from address space the mock holds PROT_NONE, and mapping
/// places nothing there: a host read of a device address faults, as on a GPU.
fn touch(what: &str) {
    let d = driver(1);
    current(&d, 0);
    let va = d.address_reserve(4 * G, 0, DevicePtr::NULL, 0).unwrap();
    let h = d.create(G, prop(&d, 0, false), 0).unwrap();
    d.map(va + G, G, 0, h, 0).unwrap();
    d.set_access(va + G, G, &[(1, 0, 3)]).unwrap();
    write(&d, va + G, &pattern(1));
    let at = match what {
        "reserved" => va + 3 * G,
        "mapped" => va + G,
        _ => {
            d.unmap(va + G, G).unwrap();
            d.address_free(va, 4 * G).unwrap();
            va + G
        }
    };
    // Safety: none; this read is meant to fault (the parent checks that it does).
    let byte = unsafe { std::ptr::read_volatile(at.get() as *const u8) };
    println!("read {byte} from a {what} device address: no fault");
}

// ---------------------------------------------------------------------------------------

/// An export moves an allocation's pages to a file of its own while other threads copy to
/// and from it: no write may be lost, no read may see another allocation's bytes.
#[test]
fn copies_racing_an_export_lose_nothing() {
    let d = std::sync::Arc::new(driver(1));
    current(&d, 0);
    let ctx = d.ctx_current();
    let va = d.address_reserve(2 * G, 0, DevicePtr::NULL, 0).unwrap();
    let h = d.create(2 * G, prop(&d, 0, true), 0).unwrap();
    d.map(va, 2 * G, 0, h, 0).unwrap();
    d.set_access(va, 2 * G, &[(1, 0, 3)]).unwrap();
    // Pages the threads never touch, written before: the move must carry them.
    for t in 0..2u64 {
        write(&d, va + t * G + 300 * 4096, &pattern(7000 + t));
    }
    // Each thread writes and reads back pages until it has done 500 rounds after the
    // export, so that copies run before, during and after the move.
    let exported = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2u64)
        .map(|t| {
            let (d, exported) = (d.clone(), exported.clone());
            std::thread::spawn(move || {
                d.ctx_set_current(ctx).unwrap();
                let (mut i, mut after) = (0u64, 0);
                while after < 500 {
                    if exported.load(std::sync::atomic::Ordering::Acquire) {
                        after += 1;
                    }
                    let at = va + t * G + (i % 256) * 4096;
                    let page = pattern(i * 2 + t);
                    write(&d, at, &page);
                    assert_eq!(read(&d, at, 4096), page, "thread {t}, write {i}");
                    i += 1;
                }
                i - 1
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let fd = d.export(h, 1, 0).unwrap();
    exported.store(true, std::sync::atomic::Ordering::Release);
    let last: Vec<u64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    // What the threads wrote last is in the exported file, as an importer sees it.
    let h2 = d.import(std::os::fd::AsRawFd::as_raw_fd(&fd), 1).unwrap();
    let vb = d.address_reserve(2 * G, 0, DevicePtr::NULL, 0).unwrap();
    d.map(vb, 2 * G, 0, h2, 0).unwrap();
    d.set_access(vb, 2 * G, &[(1, 0, 3)]).unwrap();
    for t in 0..2u64 {
        let i = last[t as usize];
        let at = t * G + (i % 256) * 4096;
        assert_eq!(read(&d, vb + at, 4096), pattern(i * 2 + t));
        assert_eq!(
            read(&d, vb + t * G + 300 * 4096, 4096),
            pattern(7000 + t),
            "a page written before the export"
        );
    }
}

// ---------------------------------------------------------------------------------------

#[test]
fn at_the_mapping_limit_the_error_names_it_and_device_memory_still_works() {
    if role().is_some() {
        return at_the_mapping_limit();
    }
    in_child(
        "at_the_mapping_limit_the_error_names_it_and_device_memory_still_works",
        "maps",
    );
}

/// The process's host mappings used up to `vm.max_map_count` by the program itself: an
/// export, which needs a view of its own file, fails with the driver's out-of-memory and
/// a message that names the limit and how to raise it; allocating, mapping and copying,
/// which need no new host mapping, go on working.
fn at_the_mapping_limit() {
    let limit: usize = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(usize::MAX);
    if limit > 300_000 {
        // Filling a raised limit would take the machine's memory, not test the mock.
        println!("scale: vm.max_map_count is {limit}, not the default: mapping limit not tested");
        return;
    }
    let d = driver(1);
    current(&d, 0);
    let va = d.address_reserve(64 * G, 0, DevicePtr::NULL, 0).unwrap();
    let p = prop(&d, 0, true);
    let first = d.create(G, p, 0).unwrap();
    // Pages of alternating protection, so that the kernel cannot merge them.
    let mut pages = Vec::new();
    loop {
        let prot = if pages.len() % 2 == 0 {
            libc::PROT_READ
        } else {
            libc::PROT_NONE
        };
        // Safety: a fresh anonymous page, unmapped below.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                prot,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if m == libc::MAP_FAILED {
            break;
        }
        pages.push(m);
    }
    let e = d.export(first, 1, 0).unwrap_err();
    println!(
        "scale: {} host mappings taken by the program; export: {}",
        pages.len(),
        e.message
    );
    assert_eq!(e.code, CUDA_ERROR_OUT_OF_MEMORY);
    assert!(
        e.message.contains("vm.max_map_count") && e.message.contains("sysctl"),
        "{}",
        e.message
    );
    for i in 0..32u64 {
        let h = if i == 0 {
            first
        } else {
            d.create(G, p, 0).unwrap()
        };
        d.map(va + i * G, G, 0, h, 0).unwrap();
        d.release(h).unwrap();
    }
    d.set_access(va, 32 * G, &[(1, 0, 3)]).unwrap();
    write(&d, va + 31 * G, &pattern(5));
    assert_eq!(read(&d, va + 31 * G, 4096), pattern(5));
    for m in pages {
        // Safety: each is a page mapped above.
        unsafe { libc::munmap(m, 4096) };
    }
    d.unmap(va, 32 * G).unwrap();
}
