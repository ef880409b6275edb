//! `cumock`: runs case files against the mock or any libcuda.so.1, records goldens,
//! diffs transcripts, and runs programs on the mock.

use cumock::runner::{cases_root, load_cases, run_suite, write_transcripts};
use cumock::{bench, diff, driver, message, profile, report, runner, trace2case};

use anyhow::{anyhow, bail, Context as _, Result};
use clap::{Parser, Subcommand, ValueEnum};
use message::Status;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The golden set the built-in mock profile is compared with.
const DEFAULT_GOLDEN: &str = "NVIDIA_H200-580.159.04";

#[derive(Parser)]
#[command(
    name = "cumock",
    version,
    about = "Conformance harness and mock for the CUDA driver's virtual memory management"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Table,
    Json,
    Junit,
}

#[derive(Subcommand)]
enum Command {
    /// Run cases (files or folders; default: the suite in cases/) against the mock, or a driver.
    Run {
        cases: Vec<PathBuf>,
        /// A libcuda.so.1 to run against instead of the mock (`libcuda.so.1` finds the system's).
        #[arg(long)]
        driver: Option<String>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// A golden set to compare with (default for the mock: cases/goldens/NVIDIA_H200-580.159.04).
        #[arg(long)]
        golden: Option<PathBuf>,
        /// Compare with no golden.
        #[arg(long)]
        no_golden: bool,
        /// Write each transcript to DIR/<case>.txt.
        #[arg(long)]
        transcripts: Option<PathBuf>,
        #[arg(long)]
        jobs: Option<usize>,
        /// Seconds before a case counts as hung.
        #[arg(long, default_value_t = 60)]
        timeout: u64,
    },
    /// Record golden transcripts for the driver this runs on, in OUT/<GPU>-<driver release>/.
    Record {
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value = "libcuda.so.1")]
        driver: String,
        cases: Vec<PathBuf>,
        #[arg(long)]
        jobs: Option<usize>,
        #[arg(long, default_value_t = 60)]
        timeout: u64,
    },
    /// Compare two transcript sets (folders of <case>.txt) step by step.
    Diff {
        a: PathBuf,
        b: PathBuf,
        /// Where the case files are, for their declared divergences.
        #[arg(long)]
        cases: Option<PathBuf>,
    },
    /// Run a program with the mock as its libcuda.so.1.
    Exec {
        /// Also LD_PRELOAD the mock (for programs that dlopen an absolute path).
        #[arg(long)]
        preload: bool,
        /// Trace every driver call as JSON lines into FILE.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Report leaks at exit.
        #[arg(long)]
        leaks: bool,
        /// Print misuse messages.
        #[arg(long)]
        misuse: bool,
        /// Misuse and leaks make the program exit with status 86.
        #[arg(long)]
        strict: bool,
        /// Inject faults: FUNC:N:ERROR, FUNC:every=K:ERROR or FUNC:rate=P:seed=S:ERROR.
        #[arg(long)]
        fault: Option<String>,
        /// Number of devices of the built-in profile.
        #[arg(long)]
        devices: Option<u32>,
        /// A profile file.
        #[arg(long)]
        profile: Option<PathBuf>,
        #[arg(trailing_var_arg = true, required = true)]
        program: Vec<String>,
    },
    /// Device profiles.
    Profile {
        #[command(subcommand)]
        command: ProfileCommand,
    },
    /// Time the VMM cycle, large copies and many live mappings, against the mock or a driver.
    Bench {
        #[arg(long)]
        driver: Option<String>,
        /// 2 MiB create-map-access-unmap-release cycles to time.
        #[arg(long, default_value_t = 2000)]
        cycles: usize,
        /// MiB per copy.
        #[arg(long, default_value_t = 256)]
        copy_mib: usize,
        /// Live mappings in the "many" measurement.
        #[arg(long, default_value_t = 100_000)]
        many: usize,
        /// Allocations in the batch pattern (create all, map all, set access on all,
        /// unmap all, release all; then as many reserve+free pairs).
        #[arg(long, default_value_t = 200)]
        batch: usize,
        /// Instead of the benchmark: an allocator-like workload growing and shrinking for
        /// this many seconds, sampling host memory, fds, mappings and call times.
        #[arg(long)]
        soak: Option<u64>,
        /// Most allocations live at once in the soak.
        #[arg(long, default_value_t = 2000)]
        soak_live: usize,
        /// Runs in this process on this library only (what the parent runs in a child
        /// for the mock and for --driver).
        #[arg(long, hide = true)]
        library: Option<String>,
    },
    /// Run a program on the real driver through the pass-through library, recording its
    /// VMM calls (and those around them) as a trace of JSON lines.
    Trace {
        /// Where the trace goes.
        #[arg(long, default_value = "cumock-trace.jsonl")]
        out: PathBuf,
        /// The real driver, by absolute path (found automatically when not given).
        #[arg(long)]
        driver: Option<PathBuf>,
        #[arg(trailing_var_arg = true, required = true)]
        program: Vec<String>,
    },
    /// Turn a trace into a case file, so it replays on the mock and on any driver.
    Trace2case {
        trace: PathBuf,
        /// Where the case goes (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The case's description line.
        #[arg(long, default_value = "A sequence recorded from a real program")]
        title: String,
    },
    /// Print the path of the mock library (a folder holding libcuda.so.1 and libcuda.so).
    LibPath,
    /// The conformance matrix as one HTML page: every case (rows) on the mock and in
    /// every golden set (columns), each cell linked to its step-by-step differences.
    Report {
        /// The page to write.
        out: PathBuf,
        /// More golden sets: a folder of transcripts, or a folder of such folders.
        #[arg(long)]
        goldens: Vec<PathBuf>,
        /// Cases (files or folders; default: the suite in cases/).
        #[arg(long)]
        cases: Vec<PathBuf>,
        #[arg(long)]
        jobs: Option<usize>,
        #[arg(long, default_value_t = 60)]
        timeout: u64,
    },
    #[command(name = "__case", hide = true)]
    Case {
        #[arg(long)]
        driver: String,
        case: PathBuf,
    },
    #[command(name = "__child", hide = true)]
    Child {
        #[arg(long)]
        driver: String,
        #[arg(long)]
        line: usize,
        case: PathBuf,
    },
}

#[derive(Subcommand)]
enum ProfileCommand {
    /// Capture the devices of a real driver as a profile.
    Capture {
        #[arg(long, default_value = "libcuda.so.1")]
        driver: String,
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also write every CUresult's string, as cuGetErrorString gives it.
        #[arg(long)]
        errors: Option<PathBuf>,
    },
}

fn main() {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("cumock: {e:#}");
            std::process::exit(2);
        }
    }
}

fn real_main(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run {
            cases,
            driver,
            format,
            golden,
            no_golden,
            transcripts,
            jobs,
            timeout,
        } => {
            let is_mock = driver.is_none();
            let driver_path = match driver {
                Some(d) => PathBuf::from(d),
                None => mock_library()?,
            };
            let suite = load_cases(&cases)?;
            let golden = if no_golden {
                None
            } else {
                golden.or_else(|| {
                    let d = cases_root(&cases).join("goldens").join(DEFAULT_GOLDEN);
                    (is_mock && d.is_dir()).then_some(d)
                })
            };
            let target = runner::Target {
                driver: driver_path.clone(),
                is_mock,
                timeout: Duration::from_secs(timeout),
            };
            let start = Instant::now();
            let results = run_suite(&suite, &target, golden.as_deref(), jobs)?;
            let elapsed = start.elapsed();
            if let Some(dir) = transcripts {
                write_transcripts(&dir, &results)?;
            }
            let out = match format {
                Format::Table => message::table(
                    &results,
                    &driver_path.display().to_string(),
                    golden.as_ref().map(|g| g.display().to_string()).as_deref(),
                    elapsed,
                ),
                Format::Json => message::json(&results),
                Format::Junit => message::junit(&results),
            };
            println!("{out}");
            Ok(if results.iter().any(|r| r.status == Status::Fail) {
                1
            } else {
                0
            })
        }
        Command::Record {
            out,
            driver,
            cases,
            jobs,
            timeout,
        } => {
            let suite = load_cases(&cases)?;
            let api = driver::Api::load(&driver)?;
            let key = golden_key(&api)?;
            drop(api);
            let target = runner::Target {
                driver: PathBuf::from(&driver),
                is_mock: false,
                timeout: Duration::from_secs(timeout),
            };
            let results = run_suite(&suite, &target, None, jobs)?;
            let dir = out.join(&key);
            write_transcripts(&dir, &results)?;
            let failures: usize = results.iter().filter(|r| r.status == Status::Fail).count();
            eprintln!("cumock: recorded {} transcripts in {}; {failures} case(s) did not do what they expect", results.len(), dir.display());
            println!(
                "{}",
                message::table(&results, &driver, None, Duration::ZERO)
            );
            Ok(0)
        }
        Command::Diff { a, b, cases } => {
            let sa = diff::load_set(&a)?;
            let sb = diff::load_set(&b)?;
            let root = cases.unwrap_or_else(|| cases_root(&[]));
            let mut declared = BTreeMap::new();
            if root.is_dir() {
                for c in load_cases(&[root])? {
                    if !c.diverges.is_empty() {
                        declared.insert(c.name.clone(), c.diverges.clone());
                    }
                }
            }
            let r = diff::compare_sets(&sa, &sb, &declared);
            print!(
                "{}",
                message::diff_report(&r, &a.display().to_string(), &b.display().to_string())
            );
            Ok(if r.undeclared() > 0 { 1 } else { 0 })
        }
        Command::Exec {
            preload,
            trace,
            leaks,
            misuse,
            strict,
            fault,
            devices,
            profile,
            program,
        } => {
            let lib = mock_library()?;
            let dir = lib.parent().expect("a file in a folder").to_owned();
            let mut cmd = program_with_library(&program, &dir);
            if preload {
                cmd.env("LD_PRELOAD", &lib);
            }
            if let Some(t) = trace {
                cmd.env("CUMOCK_TRACE", t);
            }
            for (flag, var) in [
                (leaks, "CUMOCK_LEAKS"),
                (misuse, "CUMOCK_MISUSE"),
                (strict, "CUMOCK_STRICT"),
            ] {
                if flag {
                    cmd.env(var, "1");
                }
            }
            if let Some(f) = fault {
                cmd.env("CUMOCK_FAULT", f);
            }
            if let Some(n) = devices {
                cmd.env("CUMOCK_DEVICES", n.to_string());
            }
            if let Some(p) = profile {
                cmd.env("CUMOCK_PROFILE", p);
            }
            let err = std::os::unix::process::CommandExt::exec(&mut cmd);
            bail!("cannot run {}: {err}", program[0])
        }
        Command::Profile {
            command:
                ProfileCommand::Capture {
                    driver,
                    out,
                    errors,
                },
        } => {
            let api = driver::Api::load(&driver)?;
            let p = profile::capture(&api)?;
            let text = serde_json::to_string_pretty(&p)? + "\n";
            match out {
                Some(f) => {
                    std::fs::write(&f, text).with_context(|| format!("writing {}", f.display()))?
                }
                None => print!("{text}"),
            }
            if let Some(f) = errors {
                std::fs::write(
                    &f,
                    serde_json::to_string_pretty(&profile::error_strings(&api)?)? + "\n",
                )?;
            }
            Ok(0)
        }
        Command::Bench {
            driver,
            cycles,
            copy_mib,
            many,
            batch,
            soak,
            soak_live,
            library,
        } => {
            if let Some(path) = library {
                let api = driver::Api::load(&path)?;
                let report = match soak {
                    Some(seconds) => bench::soak(&api, seconds, soak_live)?,
                    None => bench::run(
                        &api,
                        &bench::Options {
                            cycles,
                            copy_mib,
                            many,
                            batch,
                        },
                    )?,
                };
                println!("{}", serde_json::to_string_pretty(&report)?);
                std::mem::forget(api);
                return Ok(0);
            }
            // Each library runs in a child of its own, so the mock and a real driver never
            // share a process (nor its fds, mappings and memory, which the soak reports).
            let run_on = |lib: &str| -> Result<serde_json::Value> {
                let mut cmd = std::process::Command::new(std::env::current_exe()?);
                cmd.args(["bench", "--library", lib])
                    .args(["--cycles", &cycles.to_string()])
                    .args(["--copy-mib", &copy_mib.to_string()])
                    .args(["--many", &many.to_string()])
                    .args(["--batch", &batch.to_string()])
                    .args(["--soak-live", &soak_live.to_string()])
                    .stderr(std::process::Stdio::inherit());
                if let Some(s) = soak {
                    cmd.args(["--soak", &s.to_string()]);
                }
                let out = cmd.output()?;
                if !out.status.success() {
                    bail!("the benchmark on {lib} failed ({})", out.status);
                }
                serde_json::from_slice(&out.stdout)
                    .with_context(|| format!("reading the benchmark's report on {lib}"))
            };
            let mock_lib = mock_library()?.display().to_string();
            let report = match driver {
                None => run_on(&mock_lib)?,
                Some(d) if soak.is_some() => {
                    let (mock, real) = (run_on(&mock_lib)?, run_on(&d)?);
                    serde_json::json!({"mock": mock, "driver": real})
                }
                Some(d) => {
                    // Three runs of each, alternating, so that a slow spell of a shared
                    // machine falls on both sides; the batch figures are the medians.
                    let (mut mock, mut real) = (Vec::new(), Vec::new());
                    for _ in 0..3 {
                        mock.push(run_on(&mock_lib)?);
                        real.push(run_on(&d)?);
                    }
                    let side = bench::side_by_side(&mock, &real);
                    let batches = |runs: &[serde_json::Value]| -> Vec<serde_json::Value> {
                        runs.iter().map(|r| r["batch"].clone()).collect()
                    };
                    serde_json::json!({
                        "batch_side_by_side": side,
                        "batch_runs": {"mock": batches(&mock), "driver": batches(&real)},
                        "mock": mock[0],
                        "driver": real[0],
                    })
                }
            };
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(0)
        }
        Command::Trace {
            out,
            driver,
            program,
        } => {
            let lib = laid_out("libcudatrace.so", "cumock-trace-lib")?;
            let dir = lib.parent().expect("a folder").to_owned();
            let mut cmd = program_with_library(&program, &dir);
            cmd.env("CUMOCK_PASSTHROUGH_TRACE", std::path::absolute(&out)?);
            if let Some(d) = driver {
                cmd.env("CUMOCK_REAL_DRIVER", d);
            }
            let err = std::os::unix::process::CommandExt::exec(&mut cmd);
            bail!("cannot run {}: {err}", program[0])
        }
        Command::Trace2case { trace, out, title } => {
            let text = std::fs::read_to_string(&trace)
                .with_context(|| format!("reading {}", trace.display()))?;
            let case = trace2case::convert(&text, &title)?;
            match out {
                Some(f) => std::fs::write(&f, case)?,
                None => print!("{case}"),
            }
            Ok(0)
        }
        Command::LibPath => {
            println!("{}", mock_library()?.parent().expect("a folder").display());
            Ok(0)
        }
        Command::Report {
            out,
            goldens,
            cases,
            jobs,
            timeout,
        } => {
            let suite = load_cases(&cases)?;
            let root = cases_root(&cases).join("goldens");
            let reference = root.join(DEFAULT_GOLDEN);
            let target = runner::Target {
                driver: mock_library()?,
                is_mock: true,
                timeout: Duration::from_secs(timeout),
            };
            let mock = run_suite(
                &suite,
                &target,
                reference.is_dir().then_some(&*reference),
                jobs,
            )?;
            let sets = report::golden_sets(&root, &goldens)?;
            let matrix = report::build(&suite, &mock, &sets, Some(DEFAULT_GOLDEN));
            std::fs::write(&out, matrix.html("cumock conformance matrix"))
                .with_context(|| format!("writing {}", out.display()))?;
            eprint!("{}", matrix.summary());
            eprintln!("cumock: wrote {}", out.display());
            Ok(0)
        }
        Command::Case { driver, case } => {
            runner::case_process(&driver, &case)?;
            Ok(0)
        }
        Command::Child { driver, line, case } => {
            runner::child_process(&driver, &case, line)?;
            Ok(0)
        }
    }
}

/// A command for `program`, with `dir` first in its library path.
fn program_with_library(program: &[String], dir: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(&program[0]);
    cmd.args(&program[1..]);
    let ld = match std::env::var("LD_LIBRARY_PATH") {
        Ok(p) if !p.is_empty() => format!("{}:{p}", dir.display()),
        _ => dir.display().to_string(),
    };
    cmd.env("LD_LIBRARY_PATH", ld);
    cmd
}

/// `NVIDIA_H200-580.159.04`: the GPU's name and the driver's release.
fn golden_key(api: &driver::Api) -> Result<String> {
    let init = api.cuInit.ok_or_else(|| anyhow!("no cuInit"))?;
    let name_fn = api
        .cuDeviceGetName
        .ok_or_else(|| anyhow!("no cuDeviceGetName"))?;
    let mut buf = [0 as std::ffi::c_char; 256];
    // Safety: plain calls with a buffer of the size given.
    let name = unsafe {
        if init(0) != 0 || name_fn(buf.as_mut_ptr(), 256, 0) != 0 {
            bail!("the driver has no usable device");
        }
        std::ffi::CStr::from_ptr(buf.as_ptr())
            .to_string_lossy()
            .into_owned()
    };
    let mut version = 0;
    if let Some(f) = api.cuDriverGetVersion {
        // Safety: out-pointer to a local.
        unsafe { f(&mut version) };
    }
    let release = profile::driver_release().unwrap_or_else(|| format!("cuda{version}"));
    Ok(format!("{}-{release}", name.replace(' ', "_")))
}

/// The mock library, laid out as a folder holding `libcuda.so.1` and `libcuda.so`, so
/// that both `-lcuda` programs and `dlopen("libcuda.so.1")` find it, and cumock's runtime
/// as `libcudart.so.13` (`.so.12`, `.so`) when it was built beside it. `CUMOCK_LIB` names
/// the built library; by default it is the `libcuda.so` cargo built beside this binary.
fn mock_library() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("CUMOCK_LIB") {
        return lay_out(&PathBuf::from(p), "cumock-lib");
    }
    // Installed: `pip install cumock` puts the libraries in <prefix>/lib/cumock/ beside
    // <prefix>/bin/cumock; after `cargo install`, the README says to copy it there.
    let exe = std::env::current_exe()?;
    if let Some(lib) = exe
        .parent()
        .and_then(Path::parent)
        .map(|prefix| prefix.join("lib/cumock"))
        .filter(|d| d.join("libcuda.so.1").is_file())
    {
        return if lib.join("libcuda.so").is_file() {
            Ok(lib.join("libcuda.so.1"))
        } else {
            lay_out(&lib.join("libcuda.so.1"), "cumock-lib")
        };
    }
    laid_out("libcuda.so", "cumock-lib").map_err(|e| {
        let prefix = exe
            .parent()
            .and_then(Path::parent)
            .map(|p| p.join("lib/cumock/libcuda.so.1").display().to_string())
            .unwrap_or_default();
        anyhow!(
            "{e}\nthe mock library is not installed: build it in cumock's repository \
             (`cargo build --release -p cumock-driver`) and copy target/release/libcuda.so \
             to {prefix}, or set CUMOCK_LIB to it"
        )
    })
}

/// A library cargo built beside this binary, laid out under its libcuda names.
fn laid_out(file: &str, folder: &str) -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .ok_or_else(|| anyhow!("no folder for {}", exe.display()))?;
    let built = [
        dir.join(file),
        dir.join("..").join(file),
        dir.join("deps").join(file),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .ok_or_else(|| {
        anyhow!(
            "{file} is not built beside {}: run `cargo build --release`",
            dir.display()
        )
    })?;
    lay_out(&built, folder)
}

fn lay_out(built: &Path, folder: &str) -> Result<PathBuf> {
    let built = built
        .canonicalize()
        .with_context(|| format!("the library {}", built.display()))?;
    let dir = built.parent().expect("a file").join(folder);
    std::fs::create_dir_all(&dir)?;
    let mut links: Vec<(&str, PathBuf)> = vec![
        ("libcuda.so.1", built.clone()),
        ("libcuda.so", built.clone()),
    ];
    // cumock's CUDA runtime, where it was built beside the mock (cudart/): runtime
    // programs find it by its SONAME, and `-lcudart` links need the plain name.
    let cudart = built.with_file_name("libcudart.so");
    if cudart.is_file() {
        for name in ["libcudart.so.13", "libcudart.so.12", "libcudart.so"] {
            links.push((name, cudart.clone()));
        }
    }
    for (name, built) in &links {
        let link = dir.join(name);
        if std::fs::read_link(&link).ok().as_deref() != Some(built.as_path()) {
            // Made under a temporary name and renamed, so parallel runs never see a
            // half-made link.
            let tmp = dir.join(format!(".{name}.{}", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            std::os::unix::fs::symlink(built, &tmp)?;
            std::fs::rename(&tmp, &link)?;
        }
    }
    Ok(dir.join("libcuda.so.1"))
}
