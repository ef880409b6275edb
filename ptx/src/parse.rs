//! PTX statements into a syntax tree: module directives, variables, functions and
//! their bodies. Meaning (registers, types, labels) is checked by `decode`.

use crate::lex::{Tok, Token};
use crate::{LoadError, LoadErrorKind};

#[derive(Debug, Clone)]
pub enum Opnd {
    /// A register, special register (`%tid.x`), label, variable or function name.
    Name(String),
    Int(u64),
    F32(u32),
    F64(u64),
    /// `name+4` outside brackets (the address of a variable plus an offset).
    SymOff(String, i64),
    /// `[base+off]`; `base` None for an absolute address.
    Addr(Option<String>, i64),
    /// `[handle, {coordinates}]`: a texture or surface object and where to read it;
    /// `[handle, sampler, {coordinates}]` names a sampler too (the explicit sampler of
    /// `tex` and `tld4`).
    Image(String, Option<String>, Box<Opnd>),
    Vector(Vec<Opnd>),
    /// `%r1|%p1`: a result and its predicate.
    Pipe(Box<Opnd>, Box<Opnd>),
    /// `!%p`: a negated predicate source.
    Not(String),
    /// `-%r1`: a negated register (`vmad`'s operands), with its selector if any.
    Neg(String),
    /// `(a, b)`: call arguments and results.
    List(Vec<Opnd>),
    /// In a variable's initialiser: a variable's address plus an offset (`var+8`,
    /// `generic(var)+8`), or (`mask`) the bits of it a mask picks, shifted down
    /// (`0xFF00(generic(var)+4)`: its second byte, as nvcc writes pointers in packed
    /// structures).
    AddrOf {
        name: String,
        off: i64,
        generic: bool,
        mask: Option<u64>,
    },
    /// `_`: a result nobody reads.
    Sink,
}

#[derive(Debug, Clone)]
pub struct InstAst {
    pub guard: Option<(String, bool)>,
    pub opcode: String,
    pub mods: Vec<String>,
    pub ops: Vec<Opnd>,
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarSpace {
    Global,
    Const,
    Shared,
    Local,
    Param,
}

#[derive(Debug, Clone)]
pub struct VarDecl {
    pub space: VarSpace,
    pub align: Option<u32>,
    pub ty: String,
    pub name: String,
    /// Element count (product of array dimensions); None for `[]` (extern, unsized).
    pub count: Option<u64>,
    /// Declared with `[...]`: ptxas takes a `.b128` initialiser only for an array.
    pub is_array: bool,
    pub init: Vec<Opnd>,
    pub is_extern: bool,
    /// `.attribute(.managed)`: a `__managed__` variable, in managed memory.
    pub managed: bool,
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    Reg {
        ty: String,
        names: Vec<(String, Option<u32>)>,
        line: u32,
        column: u32,
    },
    Var(VarDecl),
    Label(String, u32, u32),
    /// `name: .callprototype (rets) _ (params);`: the signature indirect calls name.
    Proto {
        name: String,
        rets: Vec<VarDecl>,
        params: Vec<VarDecl>,
    },
    /// `name: .branchtargets L1, L2, ...;` (`brx.idx`'s labels) or `name: .calltargets
    /// f1, f2, ...;` (the functions an indirect call may reach).
    Targets {
        name: String,
        calls: bool,
        list: Vec<String>,
        line: u32,
        column: u32,
    },
    Open,
    Close,
    Inst(InstAst),
}

#[derive(Debug, Clone)]
pub struct FuncAst {
    pub name: String,
    pub entry: bool,
    pub rets: Vec<VarDecl>,
    pub params: Vec<VarDecl>,
    pub maxntid: Option<[u32; 3]>,
    pub reqntid: Option<[u32; 3]>,
    /// `.maxnreg`: the registers a thread may use at most (the least, if given twice).
    pub maxnreg: Option<u32>,
    /// `.reqnctapercluster`: the cluster shape the kernel must be launched with.
    pub reqnctapercluster: Option<[u32; 3]>,
    /// `.explicitcluster`: the kernel must be launched with a cluster shape.
    pub explicitcluster: bool,
    /// `.maxclusterrank`: the most blocks a cluster of the kernel may have.
    pub maxclusterrank: Option<u32>,
    /// `.blocksareclusters`: a launch's grid counts clusters of `.reqnctapercluster`.
    pub blocksareclusters: bool,
    pub body: Option<Vec<Stmt>>,
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Default)]
pub struct Ast {
    pub version: (u32, u32),
    pub target: String,
    pub funcs: Vec<FuncAst>,
    pub vars: Vec<VarDecl>,
    pub samplers: Vec<SamplerDecl>,
    /// `.global .texref name;` and `.global .surfref name;`: the module's texture and
    /// surface references, in order.
    pub references: Vec<ReferenceDecl>,
    /// `.target ..., texmode_independent`: textures and samplers are named apart
    /// (`tex`'s `[t, s, c]`), and `.samplerref`s may be declared.
    pub texmode_independent: bool,
    /// `.alias alias, aliasee;` (name, aliasee, line, column): the declared function
    /// `alias` is the defined function `aliasee`.
    pub aliases: Vec<(String, String, u32, u32)>,
}

/// `.global .samplerref name = { filter_mode = linear, addr_mode_0 = wrap, ... };`: a
/// sampler's fields as its initialiser gives them (member, value), in order.
#[derive(Debug, Clone)]
pub struct SamplerDecl {
    pub name: String,
    pub fields: Vec<(String, String)>,
    pub line: u32,
    pub column: u32,
}

/// A module-scope `.texref` or `.surfref` (the reference API: the driver binds it).
#[derive(Debug, Clone)]
pub struct ReferenceDecl {
    pub name: String,
    pub surface: bool,
    pub line: u32,
    pub column: u32,
}

/// Every opcode the decoder knows (each may still refuse some of its modifiers).
const KNOWN_OPCODES: &[&str] = &[
    "mov",
    "cp",
    "mbarrier",
    "tensormap",
    "mma",
    "wmma",
    "wgmma",
    "ldmatrix",
    "stmatrix",
    "movmatrix",
    "tex",
    "tld4",
    "txq",
    "suq",
    "suld",
    "sust",
    "sured",
    "add",
    "sub",
    "mul",
    "mad",
    "fma",
    "div",
    "rem",
    "min",
    "max",
    "abs",
    "neg",
    "and",
    "or",
    "xor",
    "not",
    "cnot",
    "shl",
    "shr",
    "popc",
    "clz",
    "brev",
    "bfind",
    "bfe",
    "bfi",
    "rcp",
    "sqrt",
    "rsqrt",
    "ex2",
    "lg2",
    "sin",
    "cos",
    "tanh",
    "copysign",
    "mul24",
    "mad24",
    "sad",
    "prmt",
    "bmsk",
    "szext",
    "lop3",
    "shf",
    "isspacep",
    "istypep",
    "selp",
    "setp",
    "set",
    "testp",
    "cvt",
    "cvta",
    "ld",
    "ldu",
    "st",
    "atom",
    "red",
    "bra",
    "ret",
    "exit",
    "trap",
    "brkpt",
    "nanosleep",
    "pmevent",
    "call",
    "membar",
    "fence",
    "prefetch",
    "prefetchu",
    "discard",
    "applypriority",
    "createpolicy",
    "bar",
    "barrier",
    "shfl",
    "vote",
    "activemask",
    "match",
    "redux",
    "addc",
    "subc",
    "madc",
    "elect",
    "dp4a",
    "dp2a",
    "vadd",
    "vsub",
    "vabsdiff",
    "vmin",
    "vmax",
    "vshl",
    "vshr",
    "vmad",
    "vset",
    "vadd2",
    "vsub2",
    "vavrg2",
    "vabsdiff2",
    "vmin2",
    "vmax2",
    "vset2",
    "vadd4",
    "vsub4",
    "vavrg4",
    "vabsdiff4",
    "vmin4",
    "vmax4",
    "vset4",
    "fns",
    "slct",
    "stacksave",
    "stackrestore",
    "alloca",
    "setmaxnreg",
    "griddepcontrol",
    "mapa",
    "getctarank",
    "brx",
];

pub struct Parser<'a> {
    toks: &'a [Token],
    pos: usize,
    /// The module's `.version`, once read: some directives need a later one.
    version: (u32, u32),
}

type PResult<T> = Result<T, LoadError>;

const TYPES: &[&str] = &[
    "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16",
    "f16x2", "bf16", "bf16x2", "f32", "f64", "pred",
];

impl<'a> Parser<'a> {
    pub fn new(toks: &'a [Token]) -> Self {
        Parser {
            toks,
            pos: 0,
            version: (0, 0),
        }
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    /// A constant expression at the cursor, if one is there and ends where an operand
    /// or initialiser ends (`,` `;` `)` `]` `}`); else the cursor stays.
    fn try_const(&mut self) -> Option<crate::cexpr::Val> {
        let mut p = self.pos;
        let v = crate::cexpr::eval(self.toks, &mut p).ok()?;
        let ends = matches!(
            self.toks.get(p).map(|t| &t.tok),
            None | Some(Tok::Punct(',' | ';' | ')' | ']' | '}'))
        );
        if !ends {
            return None;
        }
        self.pos = p;
        Some(v)
    }

    /// An integer constant expression (an address's offset).
    fn const_int(&mut self) -> PResult<u64> {
        let mut p = self.pos;
        match crate::cexpr::eval(self.toks, &mut p) {
            Ok(crate::cexpr::Val::Int(v)) => {
                self.pos = p;
                Ok(v as u64)
            }
            Ok(_) => self.err(LoadErrorKind::Syntax, "expected an integer, found a float"),
            Err(m) => self.err(LoadErrorKind::Syntax, m),
        }
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }

    fn here(&self) -> (u32, u32) {
        match self.toks.get(self.pos).or(self.toks.last()) {
            Some(t) => (t.line, t.column),
            None => (1, 1),
        }
    }

    fn err<T>(&self, kind: LoadErrorKind, message: impl Into<String>) -> PResult<T> {
        let (line, column) = self.here();
        Err(LoadError {
            line,
            column,
            kind,
            message: message.into(),
        })
    }

    fn next(&mut self) -> PResult<Tok> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.tok.clone())
            }
            None => self.err(LoadErrorKind::Syntax, "unexpected end of input"),
        }
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            let found = describe(self.peek());
            self.err(
                LoadErrorKind::Syntax,
                format!("expected `{c}`, found {found}"),
            )
        }
    }

    fn eat_dot(&mut self, w: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Dot(d)) if d == w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> PResult<String> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            other => {
                let found = describe(other);
                self.err(
                    LoadErrorKind::Syntax,
                    format!("expected a name, found {found}"),
                )
            }
        }
    }

    fn int(&mut self) -> PResult<u64> {
        let neg = self.eat_punct('-');
        match self.next()? {
            Tok::Int(v) => Ok(if neg { v.wrapping_neg() } else { v }),
            other => {
                self.pos -= 1;
                self.err(
                    LoadErrorKind::Syntax,
                    format!("expected an integer, found {}", describe(Some(&other))),
                )
            }
        }
    }

    fn small_int(&mut self) -> PResult<u32> {
        let v = self.int()?;
        u32::try_from(v).or_else(|_| self.err(LoadErrorKind::Syntax, "number out of range"))
    }

    /// Skips to just after the next `;` (for directives we accept and ignore).
    fn skip_statement(&mut self) {
        while let Some(t) = self.peek() {
            let end = *t == Tok::Punct(';');
            self.pos += 1;
            if end {
                return;
            }
        }
    }

    /// Skips a balanced `{ ... }` (debug sections).
    fn skip_braces(&mut self) -> PResult<()> {
        self.expect_punct('{')?;
        let mut depth = 1;
        while depth > 0 {
            match self.next()? {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    pub fn module(&mut self) -> PResult<Ast> {
        let mut ast = Ast::default();
        while let Some(t) = self.peek().cloned() {
            let (line, column) = self.here();
            match t {
                Tok::Dot(d) => match d.as_str() {
                    "version" => {
                        self.pos += 1;
                        ast.version = match self.next()? {
                            Tok::F64(bits) => {
                                let v = f64::from_bits(bits);
                                (v.trunc() as u32, ((v.fract() * 10.0).round()) as u32)
                            }
                            Tok::Int(v) => (v as u32, 0),
                            _ => return self.err(LoadErrorKind::Syntax, "bad .version"),
                        };
                        self.version = ast.version;
                    }
                    "target" => {
                        self.pos += 1;
                        ast.target = self.ident()?;
                        while self.eat_punct(',') {
                            if self.ident()? == "texmode_independent" {
                                ast.texmode_independent = true;
                            }
                        }
                    }
                    "address_size" => {
                        self.pos += 1;
                        let n = self.int()?;
                        if n != 64 {
                            return self.err(
                                LoadErrorKind::Unsupported,
                                format!(".address_size {n}: only 64-bit addressing is supported"),
                            );
                        }
                    }
                    "file" | "loc" | "pragma" => {
                        // `.file 1 "x.cu"` / `.loc 1 2 3` end at the line; no `;`.
                        self.pos += 1;
                        let l = line;
                        while self
                            .toks
                            .get(self.pos)
                            .is_some_and(|t| t.line == l && t.tok != Tok::Punct(';'))
                        {
                            self.pos += 1;
                        }
                        self.eat_punct(';');
                    }
                    "alias" => {
                        self.pos += 1;
                        let alias = self.ident()?;
                        self.expect_punct(',')?;
                        let aliasee = self.ident()?;
                        self.expect_punct(';')?;
                        ast.aliases.push((alias, aliasee, line, column));
                    }
                    "section" => {
                        self.pos += 1;
                        while !matches!(self.peek(), Some(Tok::Punct('{')) | None) {
                            self.pos += 1;
                        }
                        self.skip_braces()?;
                    }
                    "visible" | "extern" | "weak" | "common" | "entry" | "func" | "global"
                    | "const" | "shared" | "local" => {
                        let mut is_extern = false;
                        while let Some(Tok::Dot(l)) = self.peek() {
                            match l.as_str() {
                                "visible" | "weak" | "common" => self.pos += 1,
                                "extern" => {
                                    is_extern = true;
                                    self.pos += 1
                                }
                                _ => break,
                            }
                        }
                        let sampler = matches!(
                            (self.peek(), self.toks.get(self.pos + 1).map(|t| &t.tok)),
                            (Some(Tok::Dot(g)), Some(Tok::Dot(r))) if g == "global" && r == "samplerref"
                        );
                        let reference =
                            match (self.peek(), self.toks.get(self.pos + 1).map(|t| &t.tok)) {
                                (Some(Tok::Dot(g)), Some(Tok::Dot(r)))
                                    if g == "global"
                                        && matches!(r.as_str(), "texref" | "surfref") =>
                                {
                                    Some(r == "surfref")
                                }
                                _ => None,
                            };
                        if sampler && !is_extern {
                            self.pos += 2;
                            ast.samplers.push(self.sampler_decl(line, column)?);
                        } else if let (Some(surface), false) = (reference, is_extern) {
                            self.pos += 2;
                            ast.references
                                .push(self.reference_decl(surface, line, column)?);
                        } else if self.eat_dot("entry") {
                            ast.funcs.push(self.function(true, line, column)?);
                        } else if self.eat_dot("func") {
                            ast.funcs.push(self.function(false, line, column)?);
                        } else {
                            let mut v = self.var_decl()?;
                            v.is_extern |= is_extern;
                            self.expect_punct(';')?;
                            ast.vars.push(v);
                        }
                    }
                    other => {
                        return self.err(
                            LoadErrorKind::Unsupported,
                            format!("unsupported directive `.{other}`"),
                        )
                    }
                },
                other => {
                    return self.err(
                        LoadErrorKind::Syntax,
                        format!("expected a directive, found {}", describe(Some(&other))),
                    )
                }
            }
        }
        Ok(ast)
    }

    /// A `.texref`'s or `.surfref`'s name, after `.global .texref`, with its `;`. The
    /// ISA gives them no initialiser (the driver sets their state) and the mock takes
    /// no arrays of them: ptxas's handling of those is not recorded.
    fn reference_decl(&mut self, surface: bool, line: u32, column: u32) -> PResult<ReferenceDecl> {
        let name = self.ident()?;
        if matches!(self.peek(), Some(Tok::Punct('[' | '='))) {
            return self.err(
                LoadErrorKind::Unsupported,
                format!(
                    "`.{} {name}`: arrays of references and initialisers are not supported \
                     (declare each reference by itself)",
                    if surface { "surfref" } else { "texref" }
                ),
            );
        }
        self.expect_punct(';')?;
        Ok(ReferenceDecl {
            name,
            surface,
            line,
            column,
        })
    }

    /// A `.samplerref`'s name and initialiser, after `.global .samplerref`, with its `;`.
    /// Without an initialiser the fields are left to the runtime (the ISA), which CUDA's
    /// driver cannot set: the decoder refuses such a sampler where it is used.
    fn sampler_decl(&mut self, line: u32, column: u32) -> PResult<SamplerDecl> {
        let name = self.ident()?;
        let mut fields = Vec::new();
        if self.eat_punct('=') {
            self.expect_punct('{')?;
            loop {
                let member = self.ident()?;
                self.expect_punct('=')?;
                let value = match self.next()? {
                    Tok::Ident(v) => v,
                    Tok::Int(v) => v.to_string(),
                    other => {
                        return self.err(
                            LoadErrorKind::Syntax,
                            format!(
                                "expected a sampler field's value, found {}",
                                describe(Some(&other))
                            ),
                        )
                    }
                };
                fields.push((member, value));
                if self.eat_punct('}') {
                    break;
                }
                self.expect_punct(',')?;
            }
        }
        self.expect_punct(';')?;
        Ok(SamplerDecl {
            name,
            fields,
            line,
            column,
        })
    }

    /// `.global .align 4 .u32 name[3] = {1, 2, 3}` (after any linkage), without the `;`.
    pub fn var_decl(&mut self) -> PResult<VarDecl> {
        let (line, column) = self.here();
        let space = match self.next()? {
            Tok::Dot(s) => match s.as_str() {
                "global" => VarSpace::Global,
                "const" => VarSpace::Const,
                "shared" => VarSpace::Shared,
                "local" => VarSpace::Local,
                "param" => VarSpace::Param,
                other => {
                    self.pos -= 1;
                    return self.err(
                        LoadErrorKind::Unsupported,
                        format!("unsupported state space `.{other}`"),
                    );
                }
            },
            other => {
                self.pos -= 1;
                return self.err(
                    LoadErrorKind::Syntax,
                    format!("expected a state space, found {}", describe(Some(&other))),
                );
            }
        };
        let mut align = None;
        let mut ty = None;
        let mut managed = false;
        let mut vector = 1u64;
        loop {
            match self.peek() {
                Some(Tok::Dot(d)) if d == "align" => {
                    self.pos += 1;
                    align = Some(self.small_int()?);
                }
                // `.attribute(.managed)` (nvcc's `__managed__`); the only attribute a
                // variable takes in PTX 9.0 besides `.unified(...)`, which is refused.
                Some(Tok::Dot(d)) if d == "attribute" => {
                    self.pos += 1;
                    self.expect_punct('(')?;
                    match self.next()? {
                        Tok::Dot(a) if a == "managed" => managed = true,
                        other => {
                            return self.err(
                                LoadErrorKind::Unsupported,
                                format!(
                                    "variable attribute {} is not supported",
                                    describe(Some(&other))
                                ),
                            )
                        }
                    }
                    self.expect_punct(')')?;
                }
                Some(Tok::Dot(d)) if TYPES.contains(&d.as_str()) => {
                    ty = Some(d.clone());
                    self.pos += 1;
                }
                // `.ptr .global` annotations on kernel parameters only inform the compiler.
                Some(Tok::Dot(d))
                    if matches!(d.as_str(), "ptr" | "global" | "const" | "shared" | "local") =>
                {
                    self.pos += 1
                }
                // A vector variable is its elements in a row, aligned to the whole
                // vector by default (the ISA's vectors have 2 or 4 elements).
                Some(Tok::Dot(d)) if matches!(d.as_str(), "v2" | "v4") => {
                    vector = if d == "v2" { 2 } else { 4 };
                    self.pos += 1;
                }
                Some(Tok::Dot(d)) if d == "v8" => {
                    return self.err(
                        LoadErrorKind::Syntax,
                        "vector variables have 2 or 4 elements (`.v8` is not one)",
                    )
                }
                Some(Tok::Dot(d)) if matches!(d.as_str(), "texref" | "surfref" | "samplerref") => {
                    return self.err(
                        LoadErrorKind::Unsupported,
                        format!(
                            "`.{d}` variables are supported only at module scope (`.global \
                             .texref t;`, `.global .surfref s;`, `.global .samplerref s = \
                             {{...}};`): a kernel takes texture and surface objects as 64-bit \
                             handles"
                        ),
                    )
                }
                _ => break,
            }
        }
        let Some(ty) = ty else {
            return self.err(LoadErrorKind::Syntax, "expected a type (.u32, .b8, ...)");
        };
        let name = self.ident()?;
        let mut count = Some(vector);
        let mut is_array = false;
        if vector > 1 {
            if matches!(ty.as_str(), "b128" | "pred") {
                return self.err(LoadErrorKind::Semantic, format!("no vectors of `.{ty}`"));
            }
            let bits: u32 = ty[1..].parse().unwrap_or(8);
            align = align.or(Some(vector as u32 * bits / 8));
        }
        // `[]` (extern, or sized by the initialiser): the other dimensions still count.
        let mut open_size = false;
        let mut dims = Vec::new();
        while self.eat_punct('[') {
            is_array = true;
            if self.eat_punct(']') {
                open_size = true;
                dims.push(1);
                continue;
            }
            let n = self.int()?;
            self.expect_punct(']')?;
            dims.push(n);
            count = count.and_then(|c| c.checked_mul(n));
            if count.is_none() {
                return self.err(LoadErrorKind::Syntax, "array size overflows");
            }
        }
        let mut init = Vec::new();
        if self.eat_punct('=') {
            // Scalars in one element of each brace level: a braced row shorter than
            // its dimension is padded with zeros, as C's initialisers are.
            let mut strides: Vec<u64> = (0..dims.len())
                .map(|k| {
                    dims[k + 1..]
                        .iter()
                        .fold(vector, |p, &d| p.saturating_mul(d))
                })
                .collect();
            if vector > 1 {
                strides.push(1);
            }
            self.initializer(&mut init, 0, &strides)?;
        }
        if open_size {
            // `a[][n] = {...}`: as many rows as the initialiser's elements fill.
            count = match (count, init.len() as u64) {
                (_, 0) => None,
                (Some(row), n) if row > 0 => n.div_ceil(row).checked_mul(row),
                _ => None,
            };
        }
        Ok(VarDecl {
            space,
            align,
            ty,
            name,
            count,
            is_array,
            init,
            is_extern: false,
            managed,
            line,
            column,
        })
    }

    /// One initialiser (flattened into `out`) at brace level `depth`; `strides[d]` is how
    /// many scalars an element of a level-`d` brace holds.
    fn initializer(&mut self, out: &mut Vec<Opnd>, depth: u32, strides: &[u64]) -> PResult<()> {
        if depth > 8 {
            return self.err(LoadErrorKind::Syntax, "initializer nested too deeply");
        }
        if self.eat_punct('{') {
            let start = out.len();
            let elem = strides.get(depth as usize).copied().unwrap_or(1).max(1);
            let mut after_brace = false;
            loop {
                // The row before ends here: pad it (a last row needs none, the bytes
                // past an initialiser being zeros).
                if after_brace && elem > 1 {
                    let n = (out.len() - start) as u64;
                    let padded = n.div_ceil(elem).saturating_mul(elem);
                    // Padding costs memory the text did not: bounded, so that no input
                    // makes the loader allocate without end.
                    if (start as u64).saturating_add(padded) > 1 << 20 {
                        return self.err(
                            LoadErrorKind::Unsupported,
                            "initializer too large (over 2^20 elements with its rows' padding)",
                        );
                    }
                    out.resize(start + padded as usize, Opnd::Int(0));
                }
                after_brace = self.peek() == Some(&Tok::Punct('{'));
                self.initializer(out, depth + 1, strides)?;
                if !self.eat_punct(',') {
                    break;
                }
            }
            return self.expect_punct('}');
        }
        // A constant expression (`(1 << 8) + 3`), unless it is a mask over an address.
        let mask = matches!(
            (self.peek(), self.peek_at(1)),
            (Some(Tok::Int(_)), Some(Tok::Punct('(')))
        );
        if !mask {
            match self.try_const() {
                Some(crate::cexpr::Val::Int(v)) => {
                    out.push(Opnd::Int(v as u64));
                    return Ok(());
                }
                Some(crate::cexpr::Val::F64(v)) => {
                    out.push(Opnd::F64(v.to_bits()));
                    return Ok(());
                }
                None => {}
            }
        }
        let neg = self.eat_punct('-');
        // A mask over an address: `0xFF00(generic(var)+4)`.
        if let (false, Some(Tok::Int(mask)), Some(Tok::Punct('('))) =
            (neg, self.peek().cloned(), self.peek_at(1))
        {
            self.pos += 2;
            let Opnd::AddrOf {
                name, off, generic, ..
            } = self.address_of()?
            else {
                unreachable!("address_of gives AddrOf")
            };
            self.expect_punct(')')?;
            if mask == 0 {
                return self.err(LoadErrorKind::Syntax, "a zero mask over an address");
            }
            out.push(Opnd::AddrOf {
                name,
                off,
                generic,
                mask: Some(mask),
            });
            return Ok(());
        }
        // `generic(var)` or `var+off`, with an optional offset.
        let addr = match self.peek() {
            Some(Tok::Ident(n)) if n == "generic" => {
                matches!(self.peek_at(1), Some(Tok::Punct('(')))
            }
            Some(Tok::Ident(_)) => matches!(self.peek_at(1), Some(Tok::Punct('+' | '-'))),
            _ => false,
        };
        if addr && !neg {
            let a = self.address_of()?;
            out.push(a);
            return Ok(());
        }
        match self.next()? {
            Tok::Int(v) => out.push(Opnd::Int(if neg { v.wrapping_neg() } else { v })),
            Tok::F32(v) if !neg => out.push(Opnd::F32(v)),
            Tok::F64(v) if !neg => out.push(Opnd::F64(v)),
            // A name alone: a function's address (a table of function pointers, a
            // virtual table); decode refuses any other name.
            Tok::Ident(name)
                if !neg && !matches!(self.peek(), Some(Tok::Punct('+' | '(' | '-'))) =>
            {
                out.push(Opnd::Name(name))
            }
            Tok::Ident(_) | Tok::Punct(_) | Tok::Dot(_) => {
                self.pos -= 1;
                return self.err(
                    LoadErrorKind::Syntax,
                    format!("bad initializer {}", describe(self.peek())),
                );
            }
            other => {
                self.pos -= 1;
                return self.err(
                    LoadErrorKind::Syntax,
                    format!("bad initializer {}", describe(Some(&other))),
                );
            }
        }
        Ok(())
    }

    /// `generic(var)`, `var`, with `+off` or `-off` after either.
    fn address_of(&mut self) -> PResult<Opnd> {
        let generic = matches!(self.peek(), Some(Tok::Ident(n)) if n == "generic")
            && matches!(self.peek_at(1), Some(Tok::Punct('(')));
        let name = if generic {
            self.pos += 2;
            let n = self.ident()?;
            self.expect_punct(')')?;
            n
        } else {
            self.ident()?
        };
        let sign = if self.eat_punct('+') {
            1i64
        } else if self.eat_punct('-') {
            -1
        } else {
            0
        };
        let off = if sign == 0 {
            0
        } else {
            match self.next()? {
                Tok::Int(v) => sign.wrapping_mul(v as i64),
                other => {
                    self.pos -= 1;
                    return self.err(
                        LoadErrorKind::Syntax,
                        format!("expected an offset, found {}", describe(Some(&other))),
                    );
                }
            }
        };
        Ok(Opnd::AddrOf {
            name,
            off,
            generic,
            mask: None,
        })
    }

    fn param_list(&mut self) -> PResult<Vec<VarDecl>> {
        let mut v = Vec::new();
        self.expect_punct('(')?;
        if self.eat_punct(')') {
            return Ok(v);
        }
        loop {
            if !matches!(self.peek(), Some(Tok::Dot(d)) if d == "param" || d == "reg") {
                return self.err(LoadErrorKind::Syntax, "expected `.param`");
            }
            if matches!(self.peek(), Some(Tok::Dot(d)) if d == "reg") {
                return self.err(
                    LoadErrorKind::Unsupported,
                    "`.reg` function parameters are not supported (nvcc uses `.param`)",
                );
            }
            v.push(self.var_decl()?);
            if self.eat_punct(')') {
                return Ok(v);
            }
            self.expect_punct(',')?;
        }
    }

    fn dims(&mut self) -> PResult<[u32; 3]> {
        let mut d = [1u32; 3];
        d[0] = self.small_int()?;
        for slot in d.iter_mut().skip(1) {
            if !self.eat_punct(',') {
                break;
            }
            *slot = self.small_int()?;
        }
        Ok(d)
    }

    fn function(&mut self, entry: bool, line: u32, column: u32) -> PResult<FuncAst> {
        let mut rets = Vec::new();
        if !entry && self.peek() == Some(&Tok::Punct('(')) {
            rets = self.param_list()?;
        }
        let name = self.ident()?;
        let params = if self.peek() == Some(&Tok::Punct('(')) {
            self.param_list()?
        } else {
            Vec::new()
        };
        let (mut maxntid, mut reqntid, mut maxnreg) = (None, None, None::<u32>);
        let (mut reqnctapercluster, mut explicitcluster, mut maxclusterrank) = (None, false, None);
        let mut blocksareclusters = false;
        while let Some(Tok::Dot(d)) = self.peek() {
            {
                match d.as_str() {
                    "maxntid" => {
                        self.pos += 1;
                        maxntid = Some(self.dims()?);
                    }
                    "reqntid" => {
                        self.pos += 1;
                        reqntid = Some(self.dims()?);
                    }
                    "maxnreg" => {
                        self.pos += 1;
                        if let Some(Tok::Int(n)) = self.peek() {
                            let n = (*n).min(u32::MAX as u64) as u32;
                            maxnreg = Some(maxnreg.map_or(n, |m| m.min(n)));
                            self.pos += 1;
                        }
                    }
                    "reqnctapercluster" => {
                        self.pos += 1;
                        reqnctapercluster = Some(self.dims()?);
                    }
                    "explicitcluster" => {
                        self.pos += 1;
                        explicitcluster = true;
                    }
                    "maxclusterrank" => {
                        self.pos += 1;
                        maxclusterrank = Some(self.small_int()?);
                    }
                    "blocksareclusters" => {
                        // As ptxas says it on the H200 (runs/2026-12-03-h200-session15/
                        // explore/blocksareclusters.txt): the load is CUDA_ERROR_INVALID_PTX.
                        if self.version < (9, 0) {
                            return self.err(
                                LoadErrorKind::Semantic,
                                "Feature '.blocksareclusters' requires PTX ISA .version 9.0 or later",
                            );
                        }
                        self.pos += 1;
                        blocksareclusters = true;
                    }
                    // `.abi_preserve{_control} n`: registers the callee keeps for its
                    // caller, an ABI matter of the machine code; nothing to emulate.
                    "minnctapersm"
                    | "maxnctapersm"
                    | "noreturn"
                    | "abi_preserve"
                    | "abi_preserve_control" => {
                        self.pos += 1;
                        while matches!(self.peek(), Some(Tok::Int(_)) | Some(Tok::Punct(','))) {
                            self.pos += 1;
                        }
                    }
                    "pragma" => {
                        self.pos += 1;
                        self.skip_statement();
                    }
                    other => {
                        return self.err(
                            LoadErrorKind::Unsupported,
                            format!("unsupported function directive `.{other}`"),
                        )
                    }
                }
            }
        }
        if blocksareclusters && (reqntid.is_none() || reqnctapercluster.is_none()) {
            return self.err(
                LoadErrorKind::Semantic,
                "`.blocksareclusters` needs `.reqntid` and `.reqnctapercluster`",
            );
        }
        let body = if self.eat_punct(';') {
            None
        } else {
            Some(self.body()?)
        };
        Ok(FuncAst {
            name,
            entry,
            rets,
            params,
            maxntid,
            reqntid,
            maxnreg,
            reqnctapercluster,
            blocksareclusters,
            explicitcluster,
            maxclusterrank,
            body,
            line,
            column,
        })
    }

    fn body(&mut self) -> PResult<Vec<Stmt>> {
        self.expect_punct('{')?;
        let mut out = Vec::new();
        let mut depth = 1;
        loop {
            let (line, column) = self.here();
            match self.peek().cloned() {
                None => return self.err(LoadErrorKind::Syntax, "function body not closed"),
                Some(Tok::Punct('{')) => {
                    self.pos += 1;
                    depth += 1;
                    out.push(Stmt::Open);
                }
                Some(Tok::Punct('}')) => {
                    self.pos += 1;
                    depth -= 1;
                    if depth == 0 {
                        return Ok(out);
                    }
                    out.push(Stmt::Close);
                }
                Some(Tok::Dot(d)) => match d.as_str() {
                    "reg" => {
                        self.pos += 1;
                        let mut ty = None;
                        while let Some(Tok::Dot(t)) = self.peek() {
                            if TYPES.contains(&t.as_str()) {
                                ty = Some(t.clone());
                                self.pos += 1;
                            } else if t == "v2" || t == "v4" {
                                return self.err(
                                    LoadErrorKind::Unsupported,
                                    "vector registers are not supported",
                                );
                            } else {
                                break;
                            }
                        }
                        let Some(ty) = ty else {
                            return self.err(LoadErrorKind::Syntax, "`.reg` needs a type");
                        };
                        let mut names = Vec::new();
                        loop {
                            let n = self.ident()?;
                            let mut count = None;
                            if self.eat_punct('<') {
                                count = Some(self.small_int()?);
                                self.expect_punct('>')?;
                            }
                            names.push((n, count));
                            if !self.eat_punct(',') {
                                break;
                            }
                        }
                        self.expect_punct(';')?;
                        out.push(Stmt::Reg {
                            ty,
                            names,
                            line,
                            column,
                        });
                    }
                    "local" | "shared" | "param" | "global" | "const" => {
                        let v = self.var_decl()?;
                        self.expect_punct(';')?;
                        out.push(Stmt::Var(v));
                    }
                    "pragma" => {
                        self.pos += 1;
                        self.skip_statement();
                    }
                    "loc" | "file" => {
                        self.pos += 1;
                        while self
                            .toks
                            .get(self.pos)
                            .is_some_and(|t| t.line == line && t.tok != Tok::Punct(';'))
                        {
                            self.pos += 1;
                        }
                        self.eat_punct(';');
                    }
                    other => {
                        return self.err(
                            LoadErrorKind::Unsupported,
                            format!("unsupported directive `.{other}` in a function body"),
                        )
                    }
                },
                Some(Tok::Ident(name)) if self.peek_at(1) == Some(&Tok::Punct(':')) => {
                    self.pos += 2;
                    if self.eat_dot("callprototype") {
                        out.push(self.prototype(name)?);
                        continue;
                    }
                    let calls = self.eat_dot("calltargets");
                    if calls || self.eat_dot("branchtargets") {
                        let mut list = vec![self.ident()?];
                        while self.eat_punct(',') {
                            list.push(self.ident()?);
                        }
                        self.expect_punct(';')?;
                        out.push(Stmt::Targets {
                            name,
                            calls,
                            list,
                            line,
                            column,
                        });
                        continue;
                    }
                    out.push(Stmt::Label(name, line, column));
                }
                Some(Tok::Ident(_)) | Some(Tok::Punct('@')) => {
                    out.push(Stmt::Inst(self.instruction()?));
                }
                Some(other) => {
                    return self.err(
                        LoadErrorKind::Syntax,
                        format!("expected an instruction, found {}", describe(Some(&other))),
                    )
                }
            }
        }
    }

    /// After `name: .callprototype`: `(rets)? _ (params)? .noreturn?;`.
    fn prototype(&mut self, name: String) -> PResult<Stmt> {
        let mut rets = Vec::new();
        if self.peek() == Some(&Tok::Punct('(')) {
            rets = self.param_list()?;
        }
        if self.ident()? != "_" {
            return self.err(LoadErrorKind::Syntax, "a call prototype's name is `_`");
        }
        let mut params = Vec::new();
        if self.peek() == Some(&Tok::Punct('(')) {
            params = self.param_list()?;
        }
        self.eat_dot("noreturn");
        self.expect_punct(';')?;
        Ok(Stmt::Proto { name, rets, params })
    }

    fn instruction(&mut self) -> PResult<InstAst> {
        let (line, column) = self.here();
        let mut guard = None;
        if self.eat_punct('@') {
            let neg = self.eat_punct('!');
            guard = Some((self.ident()?, neg));
        }
        let opcode = self.ident()?;
        let mut mods = Vec::new();
        while let Some(Tok::Dot(d)) = self.peek() {
            mods.push(d.clone());
            self.pos += 1;
        }
        if !KNOWN_OPCODES.contains(&opcode.as_str()) {
            // Named before its operands are read: their syntax may be its own (`tex`).
            let full = std::iter::once(opcode.as_str())
                .chain(mods.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(".");
            return Err(LoadError {
                line,
                column,
                kind: LoadErrorKind::Unsupported,
                message: match crate::targets::refusal(&opcode, &mods, 0) {
                    Some(why) => format!("`{full}`: {why}"),
                    None => format!("unsupported instruction `{full}`"),
                },
            });
        }
        let mut ops = Vec::new();
        if !self.eat_punct(';') {
            loop {
                ops.push(self.operand()?);
                if self.eat_punct(';') {
                    break;
                }
                self.expect_punct(',')?;
            }
        }
        Ok(InstAst {
            guard,
            opcode,
            mods,
            ops,
            line,
            column,
        })
    }

    fn name_with_suffix(&mut self) -> PResult<String> {
        let mut n = self.ident()?;
        // `%tid.x`, `%ctaid.y`: special registers with a component.
        if n.starts_with('%') {
            if let Some(Tok::Dot(d)) = self.peek() {
                if matches!(d.as_str(), "x" | "y" | "z" | "w") {
                    n.push('.');
                    n.push_str(d);
                    self.pos += 1;
                }
            }
        }
        // `%r1.b0`, `%r2.h10`, `%r3.b7654`: a video instruction's byte or half selector
        // (or destination mask), kept in the name for the decoder to split off; no
        // other operand is followed by a modifier.
        if let Some(Tok::Dot(d)) = self.peek() {
            if is_video_selector(d) {
                n.push('.');
                n.push_str(d);
                self.pos += 1;
            }
        }
        Ok(n)
    }

    fn operand(&mut self) -> PResult<Opnd> {
        let first = self.operand_atom()?;
        if self.eat_punct('|') {
            let second = self.operand_atom()?;
            return Ok(Opnd::Pipe(Box::new(first), Box::new(second)));
        }
        Ok(first)
    }

    fn operand_atom(&mut self) -> PResult<Opnd> {
        self.operand_at_depth(0)
    }

    fn operand_at_depth(&mut self, depth: u32) -> PResult<Opnd> {
        if depth > 2 {
            return self.err(LoadErrorKind::Syntax, "operand nested too deeply");
        }
        // A constant expression (`(1 << 4) + 2`, `-(3 + 4)`, `~0`); a parenthesised
        // list of names (a call's) or `-%r1`, `!%p` are not one and parse below.
        let starts_expr = match (self.peek(), self.peek_at(1)) {
            (Some(Tok::Int(_) | Tok::F64(_) | Tok::Punct('(' | '~')), _) => true,
            (Some(Tok::Punct('-' | '!' | '+')), Some(t)) => !matches!(t, Tok::Ident(_)),
            _ => false,
        };
        if starts_expr {
            match self.try_const() {
                Some(crate::cexpr::Val::Int(v)) => return Ok(Opnd::Int(v as u64)),
                Some(crate::cexpr::Val::F64(v)) => return Ok(Opnd::F64(v.to_bits())),
                None => {}
            }
        }
        match self.peek().cloned() {
            Some(Tok::Punct('[')) => {
                self.pos += 1;
                let mut base = None;
                let mut off = 0i64;
                if let Some(Tok::Ident(_)) = self.peek() {
                    let name = self.name_with_suffix()?;
                    if self.eat_punct(',') {
                        let mut coords = self.operand_at_depth(depth + 1)?;
                        let mut sampler = None;
                        if self.eat_punct(',') {
                            // `[t, s, c]`: the first was the sampler.
                            let Opnd::Name(s) = coords else {
                                return self.err(
                                    LoadErrorKind::Syntax,
                                    "expected `[texture, sampler, {coordinates}]`",
                                );
                            };
                            sampler = Some(s);
                            coords = self.operand_at_depth(depth + 1)?;
                        }
                        self.expect_punct(']')?;
                        return Ok(Opnd::Image(name, sampler, Box::new(coords)));
                    }
                    base = Some(name);
                    // `[%rd1+8]`, `[%rd1+-8]`, `[%rd1-8]`.
                    if self.eat_punct('+') || self.peek() == Some(&Tok::Punct('-')) {
                        off = self.const_int()? as i64;
                    }
                } else {
                    off = self.const_int()? as i64;
                }
                self.expect_punct(']')?;
                Ok(Opnd::Addr(base, off))
            }
            Some(Tok::Punct('{')) => {
                self.pos += 1;
                let mut v = Vec::new();
                loop {
                    v.push(self.operand_at_depth(depth + 1)?);
                    if self.eat_punct('}') {
                        return Ok(Opnd::Vector(v));
                    }
                    self.expect_punct(',')?;
                }
            }
            Some(Tok::Punct('(')) => {
                self.pos += 1;
                let mut v = Vec::new();
                if self.eat_punct(')') {
                    return Ok(Opnd::List(v));
                }
                loop {
                    v.push(self.operand_at_depth(depth + 1)?);
                    if self.eat_punct(')') {
                        return Ok(Opnd::List(v));
                    }
                    self.expect_punct(',')?;
                }
            }
            Some(Tok::Punct('!')) => {
                self.pos += 1;
                Ok(Opnd::Not(self.ident()?))
            }
            Some(Tok::Punct('-')) => {
                self.pos += 1;
                if let Some(Tok::Ident(_)) = self.peek() {
                    return Ok(Opnd::Neg(self.name_with_suffix()?));
                }
                match self.next()? {
                    Tok::Int(v) => Ok(Opnd::Int(v.wrapping_neg())),
                    Tok::F64(b) => Ok(Opnd::F64((-f64::from_bits(b)).to_bits())),
                    other => {
                        self.pos -= 1;
                        self.err(
                            LoadErrorKind::Syntax,
                            format!(
                                "expected a number after `-`, found {}",
                                describe(Some(&other))
                            ),
                        )
                    }
                }
            }
            Some(Tok::Int(v)) => {
                self.pos += 1;
                Ok(Opnd::Int(v))
            }
            Some(Tok::F32(v)) => {
                self.pos += 1;
                Ok(Opnd::F32(v))
            }
            Some(Tok::F64(v)) => {
                self.pos += 1;
                Ok(Opnd::F64(v))
            }
            Some(Tok::Ident(n)) if n == "_" => {
                self.pos += 1;
                Ok(Opnd::Sink)
            }
            Some(Tok::Ident(_)) => {
                let n = self.name_with_suffix()?;
                if self.eat_punct('+') {
                    let off = self.int()? as i64;
                    return Ok(Opnd::SymOff(n, off));
                }
                Ok(Opnd::Name(n))
            }
            other => self.err(
                LoadErrorKind::Syntax,
                format!("expected an operand, found {}", describe(other.as_ref())),
            ),
        }
    }
}

/// `b0`..`b7` up to four digits, `h0`..`h3` up to two: the selectors and masks of the
/// video instructions.
pub fn is_video_selector(s: &str) -> bool {
    let (max_digit, max_len) = match s.as_bytes().first() {
        Some(b'b') => (b'7', 4),
        Some(b'h') => (b'3', 2),
        _ => return false,
    };
    let digits = &s.as_bytes()[1..];
    !digits.is_empty()
        && digits.len() <= max_len
        && digits.iter().all(|c| (b'0'..=max_digit).contains(c))
}

fn describe(t: Option<&Tok>) -> String {
    match t {
        None => "end of input".into(),
        Some(Tok::Ident(s)) => format!("`{s}`"),
        Some(Tok::Dot(s)) => format!("`.{s}`"),
        Some(Tok::Int(v)) => format!("`{v}`"),
        Some(Tok::F32(v)) => format!("`0f{v:08X}`"),
        Some(Tok::F64(v)) => format!("`0d{v:016X}`"),
        Some(Tok::Str(s)) => format!("\"{s}\""),
        Some(Tok::Punct(c)) => format!("`{c}`"),
    }
}
