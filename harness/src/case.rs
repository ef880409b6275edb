//! Case files: one scenario each, one step a line.
//!
//! ```text
//! # Mapping part of a physical allocation is rejected: CUDA cannot split one.
//! init
//! g  = granularity min device=0
//! va = reserve 4*g
//! h  = create 2*g device=0
//! map va size=g handle=h            -> CUDA_ERROR_NOT_SUPPORTED
//! map va size=2*g handle=h          -> CUDA_SUCCESS
//! ```
//!
//! A line is `[NAME =] OP ARG... [-> RESULT [KEY=VALUE...]] [# comment]`. Arguments are
//! positional or `key=value`; values are expressions over numbers (`4096`, `0x1000`,
//! `2MiB`), earlier names and `+ - * /` (`va+2*g`, `4g` is `4*g`). `child { ... }` runs
//! its steps in a second process. See `docs/case-format.md` for every operation.

use crate::ops::{self, Op};
use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub path: PathBuf,
    pub name: String,
    pub description: String,
    pub steps: Vec<Step>,
    /// Declared divergences from the real driver, each with its reason.
    pub diverges: Vec<String>,
    /// The number of devices the case needs; it is skipped on fewer.
    pub devices: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub line: usize,
    /// The step as shown in transcripts.
    pub source: String,
    pub bind: Option<String>,
    /// The operation's name as written (`map`), or `child` for a `child { }` block.
    pub operation: &'static str,
    /// The operation with its arguments, checked and typed.
    pub op: Op,
    pub expect: Option<Expect>,
}

/// An argument as written: positional or `key=value`, with its column.
#[derive(Debug, Clone, PartialEq)]
pub struct RawArg {
    pub key: Option<String>,
    pub value: String,
    pub col: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    pub result: String,
    pub outputs: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// A step's error before it has a file and line: its column and what was expected.
pub type Bad = (usize, String);

/// The directives that describe the case rather than run a step.
const DIRECTIVES: &[ops::Spec] = &[
    ops::Spec::new("diverges", &["reason"], &[]),
    ops::Spec::new("requires", &[], &["devices"]),
];

pub fn parse_file(path: &Path) -> Result<Case, ParseError> {
    let text =
        crate::files::read_regular_file(path, crate::files::MAX_CASE_BYTES).map_err(|message| {
            ParseError {
                file: path.display().to_string(),
                line: 0,
                col: 0,
                message,
            }
        })?;
    parse(path, &text)
}

pub fn parse(path: &Path, text: &str) -> Result<Case, ParseError> {
    let file = path.display().to_string();
    let err = |line: usize, (col, message): Bad| ParseError {
        file: file.clone(),
        line,
        col,
        message,
    };
    let mut description = Vec::new();
    let mut seen_step = false;
    // The open blocks: the root, and a `child {` with its line and the names bound
    // before it (what the child binds is its own).
    let mut stack: Vec<(usize, Vec<Step>, HashSet<String>)> = vec![(0, Vec::new(), HashSet::new())];
    let mut bound: HashSet<String> = HashSet::new();
    let mut diverges = Vec::new();
    let mut devices = 1;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let (code, comment) = split_comment(raw);
        if code.trim().is_empty() {
            if let (false, Some(c)) = (seen_step, comment) {
                description.push(c.trim().to_owned());
            }
            continue;
        }
        seen_step = true;
        let tokens = tokenize(code).map_err(|b| err(lineno, b))?;
        if tokens.len() == 2 && tokens[0].1 == "child" && tokens[1].1 == "{" {
            if stack.len() > 1 {
                return Err(err(
                    lineno,
                    (tokens[0].0, "child blocks do not nest".into()),
                ));
            }
            stack.push((lineno, Vec::new(), bound.clone()));
            continue;
        }
        if tokens.len() == 1 && tokens[0].1 == "}" {
            if stack.len() == 1 {
                return Err(err(lineno, (tokens[0].0, "`}` without `child {`".into())));
            }
            let (open, steps, before) = stack.pop().expect("checked");
            bound = before;
            stack.last_mut().expect("root").1.push(Step {
                line: open,
                source: "child".into(),
                bind: None,
                operation: "child",
                op: Op::Child(steps),
                expect: None,
            });
            continue;
        }
        match parse_line(&tokens, &bound).map_err(|b| err(lineno, b))? {
            Line::Diverges(reason) => diverges.push(reason),
            Line::Requires(n) => devices = n,
            Line::Step(mut step) => {
                step.line = lineno;
                if let Some(name) = &step.bind {
                    bound.insert(name.clone());
                }
                stack.last_mut().expect("root").1.push(*step);
            }
        }
    }
    if stack.len() > 1 {
        return Err(err(
            stack[1].0,
            (1, "`child {` is never closed with `}`".into()),
        ));
    }
    let steps = stack.pop().expect("root").1;
    if steps.is_empty() {
        return Err(err(1, (1, "a case needs at least one step".into())));
    }
    Ok(Case {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        path: path.to_owned(),
        description: description.join(" "),
        steps,
        diverges,
        devices,
    })
}

fn split_comment(line: &str) -> (&str, Option<&str>) {
    let mut in_quote = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_quote = !in_quote,
            '#' if !in_quote => return (&line[..i], Some(&line[i + 1..])),
            _ => {}
        }
    }
    (line, None)
}

/// Splits on whitespace, keeping "quoted strings" whole; each token with its column.
fn tokenize(code: &str) -> Result<Vec<(usize, String)>, Bad> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    let mut in_quote = false;
    let mut quote_col = 0;
    for (i, c) in code.char_indices() {
        let col = i + 1;
        if in_quote {
            if c == '"' {
                in_quote = false;
            } else {
                cur.push(c);
            }
            continue;
        }
        match c {
            '"' => {
                if cur.is_empty() {
                    start = col;
                }
                in_quote = true;
                quote_col = col;
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push((start, std::mem::take(&mut cur)));
                }
            }
            _ => {
                if cur.is_empty() {
                    start = col;
                }
                cur.push(c);
            }
        }
    }
    if in_quote {
        return Err((
            quote_col,
            "unterminated string: expected a closing `\"`".into(),
        ));
    }
    if !cur.is_empty() {
        out.push((start, cur));
    }
    Ok(out)
}

pub(crate) fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(x) if x.is_ascii_alphabetic() || x == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

enum Line {
    Step(Box<Step>),
    Diverges(String),
    Requires(u32),
}

fn parse_line(tokens: &[(usize, String)], bound: &HashSet<String>) -> Result<Line, Bad> {
    let mut i = 0;
    let mut bind = None;
    if tokens.len() >= 2 && tokens[1].1 == "=" {
        if !is_ident(&tokens[0].1) {
            return Err((
                tokens[0].0,
                format!("expected a name before `=`, found `{}`", tokens[0].1),
            ));
        }
        bind = Some(tokens[0].1.clone());
        i = 2;
    }
    let Some((op_col, op)) = tokens.get(i) else {
        return Err((
            tokens.last().map(|t| t.0).unwrap_or(1),
            "expected an operation after `=`".into(),
        ));
    };
    let Some(spec) = ops::spec(op).or_else(|| DIRECTIVES.iter().find(|d| d.name == op)) else {
        let mut names: Vec<&str> = ops::specs().map(|s| s.name).collect();
        names.extend(DIRECTIVES.iter().map(|d| d.name));
        return Err((
            *op_col,
            format!(
                "unknown operation `{op}`; expected one of: {}",
                names.join(", ")
            ),
        ));
    };
    i += 1;
    let mut args: Vec<RawArg> = Vec::new();
    let mut expect = None;
    while i < tokens.len() {
        let (col, tok) = &tokens[i];
        if tok == "->" {
            expect = Some(parse_expect(*col, &tokens[i + 1..])?);
            break;
        }
        match tok.split_once('=') {
            Some((k, v)) if is_ident(&k.replace('-', "_")) && !k.is_empty() => {
                if !spec.keys.contains(&k) {
                    return Err((
                        *col,
                        format!(
                            "`{op}` takes no key `{k}`; its keys are: {}",
                            if spec.keys.is_empty() {
                                "none".to_string()
                            } else {
                                spec.keys.join(", ")
                            }
                        ),
                    ));
                }
                if v.is_empty() {
                    return Err((*col + k.len() + 1, format!("expected a value after `{k}=`")));
                }
                // Only grants add up; any other key given twice is a slip.
                if k != "grant" && args.iter().any(|a| a.key.as_deref() == Some(k)) {
                    return Err((*col, format!("`{k}=` is given twice")));
                }
                args.push(RawArg {
                    key: Some(k.to_owned()),
                    value: v.to_owned(),
                    col: *col,
                });
            }
            _ => args.push(RawArg {
                key: None,
                value: tok.clone(),
                col: *col,
            }),
        }
        i += 1;
    }
    let given = args.iter().filter(|a| a.key.is_none()).count();
    let required = spec.positional.iter().filter(|p| !p.ends_with('?')).count();
    let end_col = tokens
        .iter()
        .take_while(|(_, t)| t != "->")
        .last()
        .map(|t| t.0 + t.1.len())
        .unwrap_or(1);
    if given < required {
        let missing = spec.positional[given].trim_end_matches('?');
        return Err((
            end_col,
            format!(
                "`{op}` expects {required} argument(s) ({}); missing `{missing}`",
                spec.positional.join(", ")
            ),
        ));
    }
    if given > spec.positional.len() {
        let extra = args
            .iter()
            .filter(|a| a.key.is_none())
            .nth(spec.positional.len())
            .expect("counted");
        return Err((
            extra.col,
            format!(
                "`{op}` takes {} positional argument(s); `{}` is one too many",
                spec.positional.len(),
                extra.value
            ),
        ));
    }
    let a = ops::Args::new(spec.name, &args, end_col, bound);
    match spec.name {
        "diverges" => return Ok(Line::Diverges(a.word(0).value.clone())),
        "requires" => {
            let n = a
                .key("devices")
                .ok_or((end_col, "`requires` needs devices=N".into()))?;
            let devices = n.value.parse().map_err(|_| {
                (
                    n.col,
                    format!("expected a device count, found `{}`", n.value),
                )
            })?;
            return Ok(Line::Requires(devices));
        }
        _ => {}
    }
    let typed = ops::parse(spec.name, &a)?;
    // The step as shown in transcripts: its tokens before `->`, single-spaced, so that
    // realigning expectations in a case file does not change its transcript.
    let shown: Vec<String> = tokens
        .iter()
        .take_while(|(_, t)| t != "->")
        .map(|(_, t)| {
            if t.contains(char::is_whitespace) {
                format!("{t:?}")
            } else {
                t.clone()
            }
        })
        .collect();
    Ok(Line::Step(Box::new(Step {
        line: 0,
        source: shown.join(" "),
        bind,
        operation: spec.name,
        op: typed,
        expect,
    })))
}

fn parse_expect(arrow_col: usize, rest: &[(usize, String)]) -> Result<Expect, Bad> {
    let Some((rcol, result)) = rest.first() else {
        return Err((arrow_col, "expected a result name after `->`".into()));
    };
    if cumock_abi::result_code(result).is_none() && result != "ok" && result != "crash" {
        return Err((
            *rcol,
            format!("expected a CUresult name after `->`, found `{result}`"),
        ));
    }
    let mut outputs = Vec::new();
    for (ocol, o) in &rest[1..] {
        let Some((k, v)) = o.split_once('=') else {
            return Err((
                *ocol,
                format!("expected KEY=VALUE after the result, found `{o}`"),
            ));
        };
        outputs.push((k.to_owned(), v.to_owned()));
    }
    Ok(Expect {
        result: result.clone(),
        outputs,
    })
}

impl Case {
    /// Whether any step (a child process's too) says what it expects: without one, and
    /// without a golden to compare with, nothing checks the case.
    pub fn has_expectations(&self) -> bool {
        self.steps.iter().any(|s| {
            s.expect.is_some()
                || s.child()
                    .is_some_and(|c| c.iter().any(|s| s.expect.is_some()))
        })
    }
}

impl Step {
    /// The step is expected to crash the process (`-> crash`).
    pub fn expects_crash(&self) -> bool {
        self.expect.as_ref().is_some_and(|e| e.result == "crash")
    }

    /// The steps of a `child { }` block.
    pub fn child(&self) -> Option<&[Step]> {
        match &self.op {
            Op::Child(steps) => Some(steps),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Case, ParseError> {
        parse(Path::new("t.case"), text)
    }

    #[test]
    fn steps_bindings_and_expectations() {
        let c = p("# Partial maps.\ninit\ng = granularity min\nh = create g\nva = reserve 4*g align=2MiB\nmap va size=g handle=h -> CUDA_ERROR_NOT_SUPPORTED\n").unwrap();
        assert_eq!(c.description, "Partial maps.");
        assert_eq!(c.steps.len(), 5);
        assert_eq!(c.steps[3].bind.as_deref(), Some("va"));
        assert_eq!(c.steps[3].operation, "reserve");
        assert_eq!(
            c.steps[4].expect.as_ref().unwrap().result,
            "CUDA_ERROR_NOT_SUPPORTED"
        );
    }

    #[test]
    fn child_blocks_and_directives() {
        let c = p(
            "requires devices=2\ndiverges \"the real driver crashes\"\ninit\nchild {\n  init\n}\n",
        )
        .unwrap();
        assert_eq!(c.devices, 2);
        assert_eq!(c.diverges, vec!["the real driver crashes"]);
        assert_eq!(c.steps[1].child().unwrap().len(), 1);
    }

    #[test]
    fn errors_name_line_column_and_what_was_expected() {
        let e = p("init\nmapp va\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 1));
        assert!(e.message.contains("unknown operation `mapp`"));
        let e = p("init\nva = reserve 2MiB\nmap va sise=g\n").unwrap_err();
        assert_eq!((e.line, e.col), (3, 8));
        assert!(e.message.contains("no key `sise`"));
        let e = p("init -> CUDA_ERROR_NOPE\n").unwrap_err();
        assert_eq!(e.col, 9);
        let e = p("va = reserve 2MiB\nunmap va\n").unwrap_err();
        assert!(e.message.contains("missing `size`"), "{}", e.message);
        let e = p("child {\ninit\n").unwrap_err();
        assert!(e.message.contains("never closed"));
        let e = p("diverges \"open\n").unwrap_err();
        assert!(e.message.contains("unterminated"));
        assert_eq!(
            e.to_string(),
            "t.case:1:10: unterminated string: expected a closing `\"`"
        );
    }

    #[test]
    fn arguments_are_typed_when_the_file_is_read() {
        let pre = "init\ng = granularity min device=0\nva = reserve 4g\nh = create g\n";
        let err = |step: &str| {
            let e = p(&format!("{pre}{step}\n")).unwrap_err();
            assert_eq!(e.line, 5, "{e}");
            (e.col, e.message)
        };
        // A required key, missing: at the end of the step.
        let (col, m) = err("map va handle=h");
        assert_eq!((col, m.as_str()), (16, "`map` needs size="));
        // A name no earlier step bound.
        let (col, m) = err("map va size=g handle=hh");
        assert_eq!(
            (col, m.as_str()),
            (22, "`hh` is not bound by an earlier step")
        );
        // Values of the wrong kind.
        assert!(err("write va value=1 width=3")
            .1
            .contains("`width=` is one of 1, 2, 4, 8"));
        assert!(err("memset va 1 0 width=4").1.contains("8, 16, 32"));
        assert!(err("reserve g out=0")
            .1
            .contains("`out=` takes only `null`"));
        assert!(err("read va len=4 data=yes").1.contains("only `skip`"));
        assert!(err("set-access va g grant=0")
            .1
            .contains("expected DEVICE:FLAGS"));
        assert!(err("set-access va g grant=0:rwx")
            .1
            .contains("expected one of none, r"));
        assert!(err("get-access va location=moon")
            .1
            .contains("expected one of device, host"));
        assert!(err("pointer-attribute colour va")
            .1
            .contains("not a pointer attribute"));
        assert!(err("attribute NOPE 0")
            .1
            .contains("`NOPE` is not a device attribute"));
        assert!(err("write va").1.contains("needs len=, or value="));
        assert!(err("map va size=g size=g handle=h")
            .1
            .contains("given twice"));
        assert!(err("reserve 4g+").1.contains("ends too soon"));
        // Names bound inside a child block stay there.
        let e = p("init\nchild {\n  x = devnull\n}\nclose x\n").unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (5, "`x` is not bound by an earlier step")
        );
    }

    #[test]
    fn every_case_of_the_suite_parses() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let mut n = 0;
        for f in std::fs::read_dir(dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "case") {
                parse_file(&f).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert!(n >= 100, "only {n} cases");
    }

    /// Runs `f` on a thread with a small stack and a deadline: a regression to unbounded
    /// recursion overflows that stack (aborting the test binary: a failure, not a hang),
    /// and one to a blocking read or an endless loop fails at the deadline.
    fn within_bounds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                let _ = tx.send(f());
            })
            .unwrap();
        rx.recv_timeout(std::time::Duration::from_secs(30))
            .expect("still running after 30 s: a hang, or a read without end")
    }

    #[test]
    fn nesting_past_the_bound_is_an_error_with_its_line_not_a_stack_overflow() {
        let deep = format!(
            "init\nva = reserve {}4096{}\n",
            "(".repeat(30_000),
            ")".repeat(30_000)
        );
        let e = within_bounds(move || p(&deep)).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("more than 64 deep"), "{e}");
        let signs = format!("init\nva = reserve {}1\n", "-".repeat(30_000));
        let e = within_bounds(move || p(&signs)).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        // Within the bound, the same form is taken.
        let fine = format!(
            "init\nva = reserve {}4096{}\n",
            "(".repeat(60),
            ")".repeat(60)
        );
        within_bounds(move || p(&fine)).unwrap();
    }

    #[test]
    fn special_and_oversized_case_files_are_refused_naming_them() {
        let e = within_bounds(|| parse_file(Path::new("/dev/zero"))).unwrap_err();
        assert!(
            e.to_string()
                .contains("/dev/zero is a device, not a regular file"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("cumock-case-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo.case");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // Safety: a NUL-terminated path of ours.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = within_bounds(move || parse_file(&fifo)).unwrap_err();
        assert!(e.to_string().contains("is a FIFO"), "{e}");
        let big = dir.join("big.case");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(crate::files::MAX_CASE_BYTES + 1).unwrap();
        let e = within_bounds(move || parse_file(&big)).unwrap_err();
        assert!(
            e.to_string().contains("is larger than 16777216 bytes"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        /// Real case text with bytes changed, removed or inserted anywhere.
        fn mutated() -> impl Strategy<Value = String> {
            let seeds = [
                include_str!("../../cases/map-partial.case"),
                include_str!("../../cases/share-two-processes.case"),
                include_str!("../../cases/access-bad-descriptors.case"),
            ];
            (
                0..seeds.len(),
                prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..20),
            )
                .prop_map(move |(i, edits)| {
                    let mut b = seeds[i].as_bytes().to_vec();
                    for (at, byte, kind) in edits {
                        let at = at % (b.len() + 1);
                        match kind {
                            0 if at < b.len() => b[at] = byte,
                            1 if at < b.len() => {
                                b.remove(at);
                            }
                            _ => b.insert(at, byte),
                        }
                    }
                    String::from_utf8_lossy(&b).into_owned()
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
            #[test]
            fn the_parser_never_panics_on_any_text(text in "(?s).{0,400}") {
                let _ = parse(Path::new("fuzz.case"), &text);
            }

            #[test]
            fn the_parser_never_panics_on_mutated_cases(text in mutated()) {
                if let Err(e) = parse(Path::new("fuzz.case"), &text) {
                    // Every error names a place inside the text.
                    prop_assert!(e.line <= text.lines().count().max(1), "{e}");
                }
            }

            #[test]
            fn expressions_never_panic(text in "(?s).{0,40}|[0-9a-zKMGTPi+*/() x-]{0,40}") {
                let vars: std::collections::HashMap<String, u64> = [("g".to_string(), 2 << 20)].into();
                let _ = crate::expr::eval(&text, &vars);
            }
        }
    }
}
