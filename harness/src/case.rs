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
    pub source: String,
    pub bind: Option<String>,
    pub op: String,
    pub args: Vec<Arg>,
    pub expect: Option<Expect>,
    /// Steps of a `child { }` block, run in a second process.
    pub child: Option<Vec<Step>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
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

/// Every operation a case may use, with its positional parameters and keys, so that a
/// typo is a parse error at its column and not a failure at run time.
pub const OPS: &[(&str, &[&str], &[&str])] = &[
    // (op, positional, keys)
    ("init", &["flags?"], &[]),
    ("driver-version", &[], &[]),
    ("device-count", &[], &[]),
    ("device", &["ordinal"], &[]),
    ("device-name", &["device"], &[]),
    ("attribute", &["name", "device"], &[]),
    ("total-mem", &["device"], &[]),
    ("uuid", &["device"], &[]),
    ("pci-bus-id", &["device"], &[]),
    ("can-access-peer", &["device", "peer"], &[]),
    ("primary-retain", &["device"], &[]),
    ("primary-release", &["device"], &[]),
    ("primary-reset", &["device"], &[]),
    ("primary-state", &["device"], &[]),
    ("primary-set-flags", &["device", "flags"], &[]),
    ("ctx-create", &["device"], &["flags", "version"]),
    ("ctx-destroy", &["ctx"], &[]),
    ("set-current", &["ctx"], &[]),
    ("get-current", &[], &[]),
    ("push", &["ctx"], &[]),
    ("pop", &[], &[]),
    ("ctx-device", &[], &[]),
    ("synchronize", &[], &[]),
    ("enable-peer", &["ctx"], &["flags"]),
    ("disable-peer", &["ctx"], &[]),
    (
        "granularity",
        &["option"],
        &[
            "device",
            "location",
            "handle-types",
            "prop",
            "type",
            "compression",
        ],
    ),
    ("reserve", &["size"], &["align", "hint", "flags", "out"]),
    ("address-free", &["addr", "size"], &[]),
    (
        "create",
        &["size"],
        &[
            "device",
            "type",
            "location",
            "handle-types",
            "flags",
            "compression",
            "prop",
            "out",
        ],
    ),
    ("release", &["handle"], &[]),
    ("map", &["addr"], &["size", "offset", "handle", "flags"]),
    ("unmap", &["addr", "size"], &[]),
    ("set-access", &["addr", "size"], &["grant", "count", "desc"]),
    ("get-access", &["addr"], &["device", "location", "out"]),
    ("export", &["handle"], &["type", "flags", "out"]),
    ("import", &["fd"], &["type"]),
    ("retain", &["addr"], &["out"]),
    ("props", &["handle"], &["out"]),
    ("mem-info", &[], &[]),
    ("alloc", &["size"], &[]),
    ("mem-free", &["addr"], &[]),
    (
        "write",
        &["addr"],
        &["len", "seed", "value", "stream", "width"],
    ),
    (
        "read",
        &["addr"],
        &["len", "seed", "value", "stream", "width", "data"],
    ),
    ("copy", &["dst", "src", "len"], &["stream", "unified"]),
    ("memset", &["addr", "count", "value"], &["width", "stream"]),
    ("range", &["addr"], &[]),
    ("pointer-attribute", &["name", "addr"], &[]),
    ("pointer-attributes", &["names", "addr"], &[]),
    ("stream-create", &[], &["flags"]),
    ("stream-destroy", &["stream"], &[]),
    ("stream-sync", &["stream"], &[]),
    ("event-create", &[], &["flags"]),
    ("event-record", &["event", "stream"], &[]),
    ("event-sync", &["event"], &[]),
    ("event-destroy", &["event"], &[]),
    ("proc", &["name"], &["version", "flags", "status"]),
    ("error-name", &["code"], &[]),
    ("error-string", &["code"], &[]),
    ("host-touch", &["addr"], &[]),
    ("devnull", &[], &[]),
    ("pipe", &[], &[]),
    ("closed-fd", &[], &[]),
    ("close", &["fd"], &[]),
    ("fd-cloexec", &["fd"], &[]),
    ("diverges", &["reason"], &[]),
    ("requires", &[], &["devices"]),
];

pub fn parse_file(path: &Path) -> Result<Case, ParseError> {
    let text = std::fs::read_to_string(path).map_err(|e| ParseError {
        file: path.display().to_string(),
        line: 0,
        col: 0,
        message: format!("cannot read: {e}"),
    })?;
    parse(path, &text)
}

pub fn parse(path: &Path, text: &str) -> Result<Case, ParseError> {
    let file = path.display().to_string();
    let err = |line: usize, col: usize, message: String| ParseError {
        file: file.clone(),
        line,
        col,
        message,
    };
    let mut description = Vec::new();
    let mut seen_step = false;
    let mut stack: Vec<(usize, Vec<Step>)> = vec![(0, Vec::new())];
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
        let tokens = tokenize(code).map_err(|(col, m)| err(lineno, col, m))?;
        if tokens.len() == 2 && tokens[0].1 == "child" && tokens[1].1 == "{" {
            if stack.len() > 1 {
                return Err(err(lineno, tokens[0].0, "child blocks do not nest".into()));
            }
            stack.push((lineno, Vec::new()));
            continue;
        }
        if tokens.len() == 1 && tokens[0].1 == "}" {
            if stack.len() == 1 {
                return Err(err(lineno, tokens[0].0, "`}` without `child {`".into()));
            }
            let (open, steps) = stack.pop().expect("checked");
            stack.last_mut().expect("root").1.push(Step {
                line: open,
                source: "child".into(),
                bind: None,
                op: "child".into(),
                args: Vec::new(),
                expect: None,
                child: Some(steps),
            });
            continue;
        }
        let step =
            parse_step(lineno, code.trim_end(), &tokens).map_err(|(col, m)| err(lineno, col, m))?;
        match step.op.as_str() {
            "diverges" => diverges.push(step.args[0].value.clone()),
            "requires" => {
                let v = &step.args[0];
                devices = v.value.parse().map_err(|_| {
                    err(
                        lineno,
                        v.col,
                        format!("expected a device count, found `{}`", v.value),
                    )
                })?;
            }
            _ => stack.last_mut().expect("root").1.push(step),
        }
    }
    if stack.len() > 1 {
        return Err(err(
            stack[1].0,
            1,
            "`child {` is never closed with `}`".into(),
        ));
    }
    let steps = stack.pop().expect("root").1;
    if steps.is_empty() {
        return Err(err(1, 1, "a case needs at least one step".into()));
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
fn tokenize(code: &str) -> Result<Vec<(usize, String)>, (usize, String)> {
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

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(x) if x.is_ascii_alphabetic() || x == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

fn parse_step(
    line: usize,
    source: &str,
    tokens: &[(usize, String)],
) -> Result<Step, (usize, String)> {
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
    let Some(&(_, positional, keys)) = OPS.iter().find(|(name, _, _)| name == op) else {
        return Err((
            *op_col,
            format!(
                "unknown operation `{op}`; expected one of: {}",
                OPS.iter().map(|o| o.0).collect::<Vec<_>>().join(", ")
            ),
        ));
    };
    i += 1;
    let mut args = Vec::new();
    let mut expect = None;
    while i < tokens.len() {
        let (col, tok) = &tokens[i];
        if tok == "->" {
            let Some((rcol, result)) = tokens.get(i + 1) else {
                return Err((*col, "expected a result name after `->`".into()));
            };
            if cumock_abi::result_code(result).is_none() && result != "ok" && result != "crash" {
                return Err((
                    *rcol,
                    format!("expected a CUresult name after `->`, found `{result}`"),
                ));
            }
            let mut outputs = Vec::new();
            for (ocol, o) in &tokens[i + 2..] {
                let Some((k, v)) = o.split_once('=') else {
                    return Err((
                        *ocol,
                        format!("expected KEY=VALUE after the result, found `{o}`"),
                    ));
                };
                outputs.push((k.to_owned(), v.to_owned()));
            }
            expect = Some(Expect {
                result: result.clone(),
                outputs,
            });
            break;
        }
        match tok.split_once('=') {
            Some((k, v)) if is_ident(&k.replace('-', "_")) && !k.is_empty() => {
                if !keys.contains(&k) {
                    return Err((
                        *col,
                        format!(
                            "`{op}` takes no key `{k}`; its keys are: {}",
                            if keys.is_empty() {
                                "none".to_string()
                            } else {
                                keys.join(", ")
                            }
                        ),
                    ));
                }
                if v.is_empty() {
                    return Err((*col + k.len() + 1, format!("expected a value after `{k}=`")));
                }
                args.push(Arg {
                    key: Some(k.to_owned()),
                    value: v.to_owned(),
                    col: *col,
                });
            }
            _ => args.push(Arg {
                key: None,
                value: tok.clone(),
                col: *col,
            }),
        }
        i += 1;
    }
    let given = args.iter().filter(|a| a.key.is_none()).count();
    let required = positional.iter().filter(|p| !p.ends_with('?')).count();
    if given < required {
        let missing = positional[given].trim_end_matches('?');
        return Err((
            tokens.last().map(|t| t.0 + t.1.len()).unwrap_or(1),
            format!(
                "`{op}` expects {required} argument(s) ({}); missing `{missing}`",
                positional.join(", ")
            ),
        ));
    }
    if given > positional.len() {
        let extra = args
            .iter()
            .filter(|a| a.key.is_none())
            .nth(positional.len())
            .expect("counted");
        return Err((
            extra.col,
            format!(
                "`{op}` takes {} positional argument(s); `{}` is one too many",
                positional.len(),
                extra.value
            ),
        ));
    }
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
    let _ = source;
    Ok(Step {
        line,
        source: shown.join(" "),
        bind,
        op: op.clone(),
        args,
        expect,
        child: None,
    })
}

impl Step {
    pub fn positional(&self, i: usize) -> Option<&Arg> {
        self.args.iter().filter(|a| a.key.is_none()).nth(i)
    }
    /// The step is expected to crash the process (`-> crash`).
    pub fn expects_crash(&self) -> bool {
        self.expect.as_ref().is_some_and(|e| e.result == "crash")
    }

    pub fn key(&self, k: &str) -> Option<&Arg> {
        self.args.iter().find(|a| a.key.as_deref() == Some(k))
    }
    pub fn keys<'a>(&'a self, k: &'a str) -> impl Iterator<Item = &'a Arg> + 'a {
        self.args
            .iter()
            .filter(move |a| a.key.as_deref() == Some(k))
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
        let c = p("# Partial maps.\ninit\nva = reserve 4*g align=2MiB\nmap va size=g handle=h -> CUDA_ERROR_NOT_SUPPORTED\n").unwrap();
        assert_eq!(c.description, "Partial maps.");
        assert_eq!(c.steps.len(), 3);
        assert_eq!(c.steps[1].bind.as_deref(), Some("va"));
        assert_eq!(c.steps[1].key("align").unwrap().value, "2MiB");
        assert_eq!(
            c.steps[2].expect.as_ref().unwrap().result,
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
        assert_eq!(c.steps[1].child.as_ref().unwrap().len(), 1);
    }

    #[test]
    fn errors_name_line_column_and_what_was_expected() {
        let e = p("init\nmapp va\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 1));
        assert!(e.message.contains("unknown operation `mapp`"));
        let e = p("init\nmap va sise=g\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 8));
        assert!(e.message.contains("no key `sise`"));
        let e = p("init -> CUDA_ERROR_NOPE\n").unwrap_err();
        assert_eq!(e.col, 9);
        let e = p("unmap va\n").unwrap_err();
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
