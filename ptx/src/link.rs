//! The driver's JIT linker for PTX inputs (cuLinkAddData of relocatable PTX, as
//! `nvcc -ptx -rdc=true` writes it): the inputs' texts combined into one PTX module.
//!
//! What nvlink does with the symbols, done on the text: an `.extern` declaration is
//! resolved by a definition in another input (a variable's declaration is dropped, since
//! the definition's is the one the module keeps; a function's prototype stays, as PTX
//! allows); two non-weak definitions of one external name are an error, as are externs
//! no input defines; a `.weak` definition gives way to a non-weak one (the first weak one
//! wins among weak ones); and names of internal linkage (no `.visible`, `.extern`,
//! `.weak` or `.common`) that another input also uses are renamed in their own input, so
//! that two files' `static` helpers never meet. Renaming every occurrence of a name in
//! one input is sound: an input that defines an internal name cannot also refer to an
//! external one of that name.

use std::collections::{BTreeSet, HashMap};

use crate::lex::{tokenize, Tok};
use crate::LoadError;

/// Functions a module may call without defining: the driver provides them (device-side
/// printf, assert, malloc and free).
pub const DRIVER_FUNCTIONS: &[&str] = &["vprintf", "__assertfail", "malloc", "free"];

/// Why the inputs do not link.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// An input is not PTX: its name and the reason.
    #[error("{0}: {1}")]
    Input(String, LoadError),
    /// Two non-weak definitions of one name (nvlink's "Multiple definition").
    #[error("error   : Multiple definition of '{name}' in '{second}', first defined in '{first}'")]
    Duplicate {
        name: String,
        first: String,
        second: String,
    },
    /// An extern no input defines (nvlink's "Undefined reference").
    #[error("error   : Undefined reference to '{name}' in '{input}'")]
    Undefined { name: String, input: String },
    #[error("no inputs to link")]
    Empty,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Linkage {
    Internal,
    Visible,
    Extern,
    Weak,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Func,
    Var,
    /// `.shared` variables: an `.extern .shared` array is the launch's dynamic shared
    /// memory, never resolved by a definition.
    Shared,
}

/// One module-scope declaration of an input.
#[derive(Debug, Clone)]
struct Decl {
    name: String,
    kind: Kind,
    linkage: Linkage,
    defines: bool,
    /// Byte range of the whole declaration (to drop it).
    span: (usize, usize),
}

struct Parsed {
    version: (u32, u32),
    target: String,
    decls: Vec<Decl>,
    /// Byte ranges of `.version`, `.target` and `.address_size`: the output has one set.
    header: Vec<(usize, usize)>,
    /// Every identifier: (byte offset, name).
    idents: Vec<(usize, String)>,
}

/// The linked text with `.maxnreg max` on every kernel defined in it: how the mock's
/// linker passes CU_JIT_MAX_REGISTERS on to the module that loads its output (ptxas holds
/// each kernel to it; a kernel's own smaller `.maxnreg` still holds, the least wins).
pub fn cap_registers(text: &str, max: u32) -> Result<String, LoadError> {
    let toks = tokenize(text)?;
    let starts = line_starts(text);
    let at = |t: &crate::lex::Token| starts[(t.line - 1) as usize] + (t.column - 1) as usize;
    let mut bodies = Vec::new();
    let (mut depth, mut in_entry) = (0i32, false);
    for t in &toks {
        match &t.tok {
            Tok::Dot(d) if depth == 0 && d == "entry" => in_entry = true,
            Tok::Punct(';') if depth == 0 => in_entry = false,
            Tok::Punct('{') => {
                if depth == 0 && in_entry {
                    bodies.push(at(t));
                    in_entry = false;
                }
                depth += 1;
            }
            Tok::Punct('}') => depth -= 1,
            _ => {}
        }
    }
    let mut out = String::with_capacity(text.len() + bodies.len() * 16);
    let mut from = 0;
    for b in bodies {
        out.push_str(&text[from..b]);
        out.push_str(&format!(".maxnreg {max}\n"));
        from = b;
    }
    out.push_str(&text[from..]);
    Ok(out)
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

fn parse_input(text: &str) -> Result<Parsed, LoadError> {
    let toks = tokenize(text)?;
    let starts = line_starts(text);
    let at = |i: usize| -> usize {
        let t = &toks[i];
        starts[(t.line - 1) as usize] + (t.column - 1) as usize
    };
    let end_of_line = |pos: usize| text[pos..].find('\n').map_or(text.len(), |n| pos + n);
    let mut p = Parsed {
        version: (0, 0),
        target: String::new(),
        decls: Vec::new(),
        header: Vec::new(),
        idents: Vec::new(),
    };
    for (i, t) in toks.iter().enumerate() {
        if let Tok::Ident(s) = &t.tok {
            p.idents.push((at(i), s.clone()));
        }
    }
    let mut i = 0;
    let mut depth = 0i32;
    while i < toks.len() {
        match &toks[i].tok {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => depth -= 1,
            Tok::Dot(d) if depth == 0 => match d.as_str() {
                "version" => {
                    if let Some(t) = toks.get(i + 1) {
                        p.version = match t.tok {
                            Tok::F64(bits) => {
                                let v = f64::from_bits(bits);
                                (v.trunc() as u32, (v.fract() * 10.0).round() as u32)
                            }
                            Tok::Int(v) => (v as u32, 0),
                            _ => p.version,
                        };
                    }
                    p.header.push((at(i), end_of_line(at(i))));
                }
                "target" => {
                    if let Some(Tok::Ident(t)) = toks.get(i + 1).map(|t| &t.tok) {
                        p.target = t.clone();
                    }
                    p.header.push((at(i), end_of_line(at(i))));
                }
                "address_size" => p.header.push((at(i), end_of_line(at(i)))),
                "visible" | "extern" | "weak" | "common" | "entry" | "func" | "global"
                | "const" | "shared" => {
                    let start = at(i);
                    let mut linkage = Linkage::Internal;
                    let mut j = i;
                    let mut kind = None;
                    while let Some(Tok::Dot(w)) = toks.get(j).map(|t| &t.tok) {
                        match w.as_str() {
                            "visible" => linkage = Linkage::Visible,
                            "extern" => linkage = Linkage::Extern,
                            "weak" | "common" => linkage = Linkage::Weak,
                            "entry" | "func" => kind = Some(Kind::Func),
                            "global" | "const" => kind = Some(Kind::Var),
                            "shared" => kind = Some(Kind::Shared),
                            _ => {}
                        }
                        j += 1;
                        if kind.is_some() {
                            break;
                        }
                    }
                    let Some(kind) = kind else {
                        i = j;
                        continue;
                    };
                    // The name: the first identifier outside parentheses (a function's
                    // return parameters come before it).
                    let mut parens = 0;
                    let mut name = None;
                    while let Some(t) = toks.get(j) {
                        match &t.tok {
                            Tok::Punct('(') => parens += 1,
                            Tok::Punct(')') => parens -= 1,
                            Tok::Ident(s) if parens == 0 => {
                                name = Some(s.clone());
                                j += 1;
                                break;
                            }
                            Tok::Punct(';') | Tok::Punct('{') => break,
                            _ => {}
                        }
                        j += 1;
                    }
                    let Some(name) = name else {
                        i = j;
                        continue;
                    };
                    // The end: a `;` outside parentheses and braces, or a body's `}`.
                    let (mut parens, mut braces) = (0, 0);
                    let mut defines = kind != Kind::Func && linkage != Linkage::Extern;
                    let mut end = text.len();
                    while let Some(t) = toks.get(j) {
                        match &t.tok {
                            Tok::Punct('(') => parens += 1,
                            Tok::Punct(')') => parens -= 1,
                            Tok::Punct('{') => {
                                if kind == Kind::Func && braces == 0 && parens == 0 {
                                    defines = true;
                                }
                                braces += 1;
                            }
                            Tok::Punct('}') => {
                                braces -= 1;
                                if kind == Kind::Func && braces == 0 {
                                    end = at(j) + 1;
                                    break;
                                }
                            }
                            Tok::Punct(';') if parens == 0 && braces == 0 => {
                                end = at(j) + 1;
                                break;
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    p.decls.push(Decl {
                        name,
                        kind,
                        linkage,
                        defines,
                        span: (start, end),
                    });
                    i = j + 1;
                    continue;
                }
                _ => {}
            },
            _ => {}
        }
        i += 1;
    }
    Ok(p)
}

/// Links PTX inputs, each `(name, text)`, into one module's text.
pub fn link(inputs: &[(String, String)]) -> Result<String, LinkError> {
    if inputs.is_empty() {
        return Err(LinkError::Empty);
    }
    let parsed: Vec<Parsed> = inputs
        .iter()
        .map(|(n, t)| parse_input(t).map_err(|e| LinkError::Input(n.clone(), e)))
        .collect::<Result<_, _>>()?;
    // Names of external linkage: which input's definition is kept.
    let mut chosen: HashMap<&str, (usize, Linkage)> = HashMap::new();
    for (k, p) in parsed.iter().enumerate() {
        for d in &p.decls {
            if !d.defines || d.linkage == Linkage::Internal || d.kind == Kind::Shared {
                continue;
            }
            match chosen.get(d.name.as_str()) {
                None => {
                    chosen.insert(&d.name, (k, d.linkage));
                }
                Some(&(_, Linkage::Weak)) if d.linkage != Linkage::Weak => {
                    chosen.insert(&d.name, (k, d.linkage));
                }
                Some(&(first, l)) if l != Linkage::Weak && d.linkage != Linkage::Weak => {
                    if first != k {
                        return Err(LinkError::Duplicate {
                            name: d.name.clone(),
                            first: inputs[first].0.clone(),
                            second: inputs[k].0.clone(),
                        });
                    }
                }
                Some(_) => {}
            }
        }
    }
    // Names each input uses, to rename internal ones that meet another input's.
    let used: Vec<BTreeSet<&str>> = parsed
        .iter()
        .map(|p| p.idents.iter().map(|(_, s)| s.as_str()).collect())
        .collect();
    let mut out = String::new();
    let version = parsed.iter().map(|p| p.version).max().unwrap_or((0, 0));
    let target = parsed
        .iter()
        .map(|p| p.target.as_str())
        .max_by_key(|t| {
            t.trim_start_matches("sm_")
                .trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse::<u32>()
                .unwrap_or(0)
        })
        .unwrap_or("sm_90");
    out.push_str(&format!(
        "// Linked by cumock's driver from {} PTX input(s).\n.version {}.{}\n.target {target}\n.address_size 64\n",
        inputs.len(),
        version.0,
        version.1
    ));
    for (k, (p, (name, text))) in parsed.iter().zip(inputs).enumerate() {
        let mut drop: Vec<(usize, usize)> = p.header.clone();
        let mut rename: HashMap<&str, String> = HashMap::new();
        for d in &p.decls {
            match (d.linkage, d.kind) {
                (Linkage::Internal, _) => {
                    let elsewhere = used
                        .iter()
                        .enumerate()
                        .any(|(o, u)| o != k && u.contains(d.name.as_str()));
                    if elsewhere {
                        rename.insert(&d.name, format!("{}$cumock_link{k}", d.name));
                    }
                }
                (_, Kind::Shared) => {}
                (Linkage::Extern, kind) => match chosen.get(d.name.as_str()) {
                    Some(_) if kind == Kind::Var => drop.push(d.span),
                    Some(_) => {}
                    None if kind == Kind::Func
                        && (DRIVER_FUNCTIONS.contains(&d.name.as_str())
                            || crate::devrt::is_device_runtime(&d.name)) => {}
                    None => {
                        return Err(LinkError::Undefined {
                            name: d.name.clone(),
                            input: name.clone(),
                        })
                    }
                },
                // A definition another input's replaces (a weak one, or a second weak).
                (_, _) if d.defines && chosen.get(d.name.as_str()).map(|c| c.0) != Some(k) => {
                    drop.push(d.span)
                }
                _ => {}
            }
        }
        drop.sort();
        let mut edits: Vec<(usize, usize, String)> = drop
            .iter()
            .map(|&(a, b)| {
                // Blanked, keeping the lines, so that line numbers within an input stay.
                let blank: String = text[a..b]
                    .chars()
                    .map(|c| if c == '\n' { '\n' } else { ' ' })
                    .collect();
                (a, b, blank)
            })
            .collect();
        for (pos, s) in &p.idents {
            if let Some(new) = rename.get(s.as_str()) {
                if !drop.iter().any(|&(a, b)| (a..b).contains(pos)) {
                    edits.push((*pos, pos + s.len(), new.clone()));
                }
            }
        }
        edits.sort_by_key(|e| e.0);
        out.push_str(&format!("// ---- {name}\n"));
        let mut last = 0;
        for (a, b, s) in edits {
            if a < last {
                continue;
            }
            out.push_str(&text[last..a]);
            out.push_str(&s);
            last = b;
        }
        out.push_str(&text[last..]);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = ".version 9.0\n.target sm_90\n.address_size 64\n";

    fn l(inputs: &[&str]) -> Result<String, LinkError> {
        let v: Vec<(String, String)> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("in{i}"), format!("{HEAD}{t}")))
            .collect();
        link(&v)
    }

    #[test]
    fn an_extern_function_and_variable_resolve_to_another_inputs_definitions() {
        let out = l(&[
            ".extern .func (.param .b32 r) f(.param .b32 a);\n.extern .global .align 4 .u32 g;\n\
             .visible .entry k() { .reg .b32 %r<2>; ld.global.u32 %r1, [g]; ret; }\n",
            ".visible .global .align 4 .u32 g = 7;\n\
             .visible .func (.param .b32 r) f(.param .b32 a) { ret; }\n",
        ])
        .unwrap();
        let m = crate::Module::parse(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
        assert_eq!(m.globals.len(), 1);
        assert_eq!(out.matches(".version").count(), 1);
    }

    #[test]
    fn two_definitions_of_one_name_are_an_error_unless_one_is_weak() {
        let f = ".visible .func f() { ret; }\n";
        assert!(matches!(l(&[f, f]), Err(LinkError::Duplicate { .. })));
        let weak = ".weak .func f() { ret; }\n";
        let out = l(&[weak, f, weak]).unwrap();
        assert_eq!(out.matches("func f()").count(), 1, "{out}");
        assert!(out.contains(".visible .func f()"), "{out}");
        let out = l(&[weak, weak]).unwrap();
        assert_eq!(out.matches("func f()").count(), 1, "{out}");
    }

    #[test]
    fn an_undefined_extern_is_an_error_but_the_drivers_functions_are_not() {
        let e = l(&[".extern .func g();\n"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "error   : Undefined reference to 'g' in 'in0'"
        );
        l(&[".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"]).unwrap();
    }

    #[test]
    fn internal_names_met_in_two_inputs_are_renamed_in_each() {
        let h = ".func (.param .b32 r) h() { st.param.b32 [r], 1; ret; }\n\
                 .global .align 4 .u32 s;\n";
        let out = l(&[h, h]).unwrap();
        crate::Module::parse(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
        assert!(
            out.contains("h$cumock_link0") && out.contains("h$cumock_link1"),
            "{out}"
        );
        assert!(out.contains("s$cumock_link1"), "{out}");
    }

    #[test]
    fn a_register_cap_becomes_each_kernels_maxnreg_and_the_least_holds() {
        let out = l(&[
            ".visible .entry a() { ret; }\n.func f() { ret; }\n\
             .visible .entry b() .maxnreg 16 { ret; }\n.extern .func g();\n",
            ".visible .func g() { ret; }\n",
        ])
        .unwrap();
        let capped = cap_registers(&out, 40).unwrap();
        assert_eq!(capped.matches(".maxnreg 40").count(), 2, "{capped}");
        let m = crate::Module::parse(&capped).unwrap_or_else(|e| panic!("{e}\n{capped}"));
        let cap = |name: &str| {
            m.kernels
                .iter()
                .find(|k| k.name == name)
                .unwrap()
                .max_registers
        };
        assert_eq!((cap("a"), cap("b")), (Some(40), Some(16)));
    }
}
