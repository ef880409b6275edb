#!/usr/bin/env python3
"""Generate the driver API's one declaration from NVIDIA's headers.

    python3 abi/gen/gen.py <include dir>

writes abi/src/generated.rs (result codes, attribute names, the cuGetProcAddress table)
and abi/src/api.rs (every export of the real driver: its parameters with C types mapped
to Rust ABI types, its base name, variant, the CUDA version it appeared in and the group
of cuda.h's documentation it is in; one trait per group, with one not-emulated default
method per export of the group; and the macros that export, forward or load it).
`abi/tests/generated.rs` reruns this script and fails if the committed files differ, so
the declaration cannot drift from the headers.

The headers (cuda.h, cudaTypedefs.h and the GL/EGL/VDPAU/profiler typedef headers) come
from the registry package (`pip install 'nvidia-cuda-runtime==13.0.*'`); they are never
committed, only what is derived from them. `--check` compares instead of writing.
"""
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ABI = HERE.parent
EXPORTS = (HERE / "exports-580.159.04.txt").read_text().split()
TYPEDEF_HEADERS = [
    "cudaTypedefs.h",
    "cudaGLTypedefs.h",
    "cudaEGLTypedefs.h",
    "cudaVDPAUTypedefs.h",
    "cudaProfilerTypedefs.h",
]
# Headers whose types the signatures use. cudaProfiler.h is not in the registry package;
# its one type is in PLATFORM_TYPES.
TYPE_HEADERS = ["cuda.h", "cudaGL.h", "cudaEGL.h", "cudaVDPAU.h"]

# Types of the window-system headers that cudaGL.h, cudaEGL.h and cudaVDPAU.h include
# (GL/gl.h, EGL/egl.h, vdpau.h: not in the package), and of the missing cudaProfiler.h.
# mock-driver/tests/header.rs compiles the headers over stand-ins with these types.
PLATFORM_TYPES = {
    "GLuint": "::std::ffi::c_uint",
    "GLenum": "::std::ffi::c_uint",
    "HGPUNV": "*mut ::std::ffi::c_void",
    "EGLImageKHR": "*mut ::std::ffi::c_void",
    "EGLStreamKHR": "*mut ::std::ffi::c_void",
    "EGLSyncKHR": "*mut ::std::ffi::c_void",
    "EGLint": "i32",
    "VdpDevice": "u32",
    "VdpVideoSurface": "u32",
    "VdpOutputSurface": "u32",
    # A function type in vdpau.h; only pointers to it are passed.
    "VdpGetProcAddress": "::std::ffi::c_void",
    # cudaProfiler.h's enum.
    "CUoutput_mode": "::std::ffi::c_int",
}

C_SCALARS = {
    "void": "::std::ffi::c_void",
    "char": "::std::ffi::c_char",
    "signed char": "i8",
    "unsigned char": "u8",
    "short": "i16",
    "unsigned short": "u16",
    "int": "::std::ffi::c_int",
    "unsigned int": "::std::ffi::c_uint",
    "unsigned": "::std::ffi::c_uint",
    "long": "::std::ffi::c_long",
    "unsigned long": "::std::ffi::c_ulong",
    "long long": "::std::ffi::c_longlong",
    "unsigned long long": "::std::ffi::c_ulonglong",
    "size_t": "usize",
    "float": "f32",
    "double": "f64",
    "int32_t": "i32",
    "uint32_t": "u32",
    "int64_t": "i64",
    "uint64_t": "u64",
    "uint8_t": "u8",
    "uint16_t": "u16",
    # cuda.h's Windows branch of cuuint32_t/cuuint64_t (both branches are read).
    "unsigned __int32": "u32",
    "unsigned __int64": "u64",
}

# The result code keeps the mock's historical unsigned type; every other enum is an int,
# read raw so an out-of-range value is an error, not undefined behaviour.
ENUM_OVERRIDES = {"CUresult": "u32"}


# The groups of the API. cuda.h files each function under a doxygen group: a comment
# `\defgroup CUDA_VA Virtual Memory Management` opens it, and the declarations between
# that comment's `@{` and the matching `@}` are its members. cudaGL.h, cudaEGL.h and
# cudaVDPAU.h do the same. Each group becomes one trait of api.rs (so the mock files its
# implementation by noun), with these rules:
# - a function's exported variants (`_v2`, `_ptds`, `_ptsz`, and the old versions cuda.h
#   declares only under `__CUDA_API_VERSION_INTERNAL`, outside any group) are in the
#   group of its base name: they are one function;
# - a `X_DEPRECATED` group is merged into `X` where `X` exists (cuCtxAttach is context
#   management); the deprecated groups without a live one (texture and surface
#   references) stay groups of their own;
# - a function no header files under a group is in its typedef header's group below
#   (cudaProfiler.h, which has the profiler's, is not in the registry package), or in
#   UNGROUPED's;
# - the trait's name is the group's title in CamelCase without the words in
#   TITLE_NOISE, plus `Api`: "Virtual Memory Management" is `VirtualMemoryApi`.
HEADER_GROUPS = {"cudaProfilerTypedefs.h": ("CUDA_PROFILER", "Profiler Control")}
# cuda.h declares cuGetExportTable between two groups, undocumented: it hands out the
# driver's internal entry points, as cuGetProcAddress hands out the public ones.
UNGROUPED = {"cuGetExportTable": "CUDA_DRIVER_ENTRY_POINT"}
TITLE_NOISE = {"Management", "Managment", "Functions", "API", "CUDA", "DEPRECATED"}


def read_groups(text, groups, member):
    """Adds each doxygen group of a header to `groups` (id -> title, in order) and each
    function declared inside one to `member` (name -> group id; the first one wins)."""
    stack, pending = [], None
    # In the order they come: group openings, `@{`, `@}` and declarations (whose name may
    # be on the line after `CUresult CUDAAPI`).
    marks = r"\\defgroup[ \t]+(\w+)[ \t]+([^\n]*)|(@\{)|(@\})|\bCUresult\s+CUDAAPI\s+(\w+)\s*\("
    for m in re.finditer(marks, text):
        gid, title, opening, closing, function = m.groups()
        if gid:
            pending = gid
            groups.setdefault(gid, title.replace("[DEPRECATED]", "").strip())
        elif opening:
            stack.append(pending or (stack[-1] if stack else None))
            pending = None
        elif closing:
            if stack:
                stack.pop()
        elif stack and stack[-1]:
            member.setdefault(function, stack[-1])
    # A function declared under another name, which a macro maps to it
    # (`#define cuGraphInstantiate cuGraphInstantiateWithFlags`), is where that name is.
    for alias, name in re.findall(r"^\s*#\s*define\s+(cu\w+)\s+(cu\w+)\s*$", text, re.M):
        if alias in member:
            member.setdefault(name, member[alias])


def merged(group, groups):
    """The group a function is filed under: a deprecated group's live one, if any."""
    base = group.removesuffix("_DEPRECATED")
    return base if base in groups else group


def trait_name(title):
    words = [w for w in re.findall(r"[A-Za-z0-9]+", title) if w not in TITLE_NOISE]
    # An acronym is one word: `EGL` is `Egl`, as Rust names it.
    words = [w.capitalize() if w.isupper() else w[0].upper() + w[1:] for w in words]
    return "".join(words) + "Api"


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # Preprocessor lines, joined continuations first.
    text = re.sub(r"\\\n", " ", text)
    text = re.sub(r"^\s*#[^\n]*", " ", text, flags=re.M)
    for macro in ("CUDAAPI", "CUDA_CB", "__CUDA_DEPRECATED", "CUDARTAPI"):
        text = re.sub(r"\b%s\b" % macro, " ", text)
    # C++ linkage blocks (`extern "C" {` ... `}`) are not scopes of their own.
    text = re.sub(r'extern\s+"C"\s*\{', " ", text)
    text = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", text)
    text = re.sub(r"_CONCAT_OUTER\(\s*(\w+)\s*,\s*RESOURCE_ABI_VERSION\s*\)", r"\g<1>1", text)
    return text


def statements(text):
    """Top-level `;`-terminated statements, braces kept whole."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif ch == ";" and depth == 0:
            out.append(" ".join(text[start:i].split()))
            start = i + 1
    return out


class Types:
    """What each typedef name of the headers is: enough to map a parameter to Rust."""

    def __init__(self):
        # name -> ("alias", target) | ("enum",) | ("struct", name) | ("handle", struct tag)
        #         | ("fn", return type, parameters)
        self.kind = {}

    def read(self, text):
        for st in statements(strip(text)):
            st = st.strip().lstrip("}").strip()
            if not st.startswith("typedef "):
                continue
            body = st[len("typedef "):]
            m = re.fullmatch(r"(\w[\w\s]*?)\s*\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)", body)
            if m:
                self.kind.setdefault(m.group(2), ("fn", m.group(1), m.group(3)))
                continue
            m = re.fullmatch(r"enum\s*(\w+)?\s*\{.*\}\s*(\w+)", body)
            if m:
                self.kind.setdefault(m.group(2), ("enum",))
                continue
            m = re.fullmatch(r"(struct|union)\s*(\w+)?\s*\{.*\}\s*(\w+)", body)
            if m:
                self.kind.setdefault(m.group(3), ("struct", m.group(3)))
                continue
            m = re.fullmatch(r"(?:struct|union)\s+(\w+)\s*\*\s*(\w+)", body)
            if m:
                self.kind.setdefault(m.group(2), ("handle", m.group(1)))
                continue
            m = re.fullmatch(r"(?:struct|union)\s+(\w+)\s+(\w+)", body)
            if m:
                self.kind.setdefault(m.group(2), ("struct", m.group(2)))
                continue
            m = re.fullmatch(r"(?:enum\s+)?([\w ]+?)\s+(\w+)", body)
            if m:
                self.kind.setdefault(m.group(2), ("alias", m.group(1).strip()))

    def canonical(self, name):
        """The unversioned name cuda.h gives a versioned type (`CUdeviceptr_v2` is
        `CUdeviceptr`), so signatures read as the documentation does."""
        for other, k in self.kind.items():
            if k == ("alias", name) and re.fullmatch(re.escape(other) + r"_v\d+", name):
                return other
        return name


class Mapper:
    def __init__(self, types):
        self.types = types
        self.used = {}  # rust type name -> definition line
        self.handles = set()  # rust names of handle types (pointers to driver structs)

    def base(self, name):
        """The Rust name of a C type name, defining it on first use."""
        if name in C_SCALARS:
            return C_SCALARS[name]
        if name in PLATFORM_TYPES:
            self.used.setdefault(name, f"pub type {name} = {PLATFORM_TYPES[name]};")
            return name
        k = self.types.kind.get(name)
        if k is None:
            sys.exit(f"gen.py: unknown C type {name}")
        rust = self.types.canonical(name)
        if rust in self.used:
            return rust
        if k[0] == "alias":
            target = self.base(k[1])
            if target == rust:
                # `CUdevice` is `CUdevice_v1`, which is canonically `CUdevice`.
                return rust
            self.used[rust] = f"pub type {rust} = {target};"
            if target in self.handles:
                self.handles.add(rust)
        elif k[0] == "enum":
            self.used[rust] = f"pub type {rust} = {ENUM_OVERRIDES.get(rust, '::std::ffi::c_int')};"
        elif k[0] == "handle":
            # A pointer to a struct of the driver's, as in C: each handle type is its own
            # (a stream is not a context), with the ABI of a pointer.
            tag = k[1]
            self.used.setdefault(
                tag,
                f"/// `struct {tag}`: the driver's own, never looked into.\n"
                f"#[repr(C)]\npub struct {tag} {{\n    _opaque: [u8; 0],\n}}",
            )
            self.used[rust] = f"pub type {rust} = *mut {tag};"
            self.handles.add(rust)
        elif k[0] == "struct":
            self.used[rust] = (
                f"/// Opaque here: only pointers to it are passed. Lay it out in lib.rs to use it.\n"
                f"#[repr(C)]\npub struct {rust} {{\n    _opaque: [u8; 0],\n}}"
            )
        elif k[0] == "fn":
            self.used[rust] = "pending"
            params = [self.param(p, i)[1] for i, p in enumerate(split_params(k[2]))]
            ret = self.ty(k[1])
            ret = "" if ret == "::std::ffi::c_void" else f" -> {ret}"
            self.used[rust] = (
                f"pub type {rust} = Option<unsafe extern \"C\" fn({', '.join(params)}){ret}>;"
            )
        return rust

    def ty(self, c):
        """`const CUmemAccessDesc *` -> `*const CUmemAccessDesc`."""
        c = c.strip()
        stars = c.count("*")
        words = c.replace("*", " * ").split()
        # const-ness of each pointer level: a `const` before the first `*` is the pointee's.
        consts, level = [False] * (stars + 1), 0
        base_words = []
        for w in words:
            if w == "*":
                level += 1
            elif w == "const":
                consts[level] = True
            elif w in ("struct", "enum", "union"):
                continue
            else:
                base_words.append(w)
        rust = self.base(" ".join(base_words))
        for lvl in range(stars):
            rust = ("*const " if consts[lvl] else "*mut ") + rust
        return rust

    def param(self, p, i):
        """`const CUmemAccessDesc *desc` -> (`desc`, `*const CUmemAccessDesc`, C type)."""
        p = p.strip()
        m = re.fullmatch(r"(.*?)\b(\w+)\s*(\[\s*\w*\s*\])?", p)
        ctype = m.group(1).strip() if m else ""
        last = m.group(2) if m else ""
        if ctype in ("", "const", "struct", "enum") or last in C_SCALARS or last in ("int", "long", "short"):
            # No parameter name, only a type.
            ctype, name = p, f"arg{i}"
        else:
            name = m.group(2)
            if m.group(3):
                ctype += " *"
        return name, self.ty(ctype), ctype


def split_params(s):
    s = s.strip()
    if s in ("", "void"):
        return []
    return [p.strip() for p in s.split(",")]


# ------------------------------------------------------------------ parameter roles
# What each parameter means to the call, from its C type and name (rules below) and,
# where the header cannot say, a reviewed line of roles.txt. api.rs's `Role` documents
# each; `Param::role` carries it, and the mock's argument conversion is chosen by it.
ROLES_FILE = HERE / "roles.txt"

# Integer types the header declares as plain aliases, which name an object all the same.
VALUE_HANDLES = {"CUdevice", "CUmemGenericAllocationHandle", "CUtexObject", "CUsurfObject"}
# The parameter names of a count that goes with an array beside it.
COUNT_NAME = re.compile(r"^(num[A-Z]\w*|count|len|n[A-Z]\w*|\w+Count)$")
INTEGERS = set(C_SCALARS) - {"void", "char", "float", "double"}


TRACE_HOW = re.compile(r"number|out-int|out-pointer|out-enum:\w+")


def read_trace_lines(text, rows):
    """roles.txt's `trace` lines, checked against the declaration: the trace's own names
    (base names, comma-separated, then `param=name`...), how it shows a value its role
    does not say (`trace-as base param how`), and its words for handle types
    (`trace-noun type word`)."""
    params = {}
    for r in rows:
        if r[1]:
            params.setdefault(r[1], set()).update(n for n, _, _, _ in r[4])
    names, shown, nouns = [], [], []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        words = line.split()
        if not words or not words[0].startswith("trace"):
            continue
        if words[0] == "trace-noun" and len(words) == 3:
            nouns.append((words[1], words[2]))
            continue
        if words[0] == "trace-as" and len(words) == 4 and TRACE_HOW.fullmatch(words[3]):
            bases, renames = [words[1]], [(words[2], None)]
            shown.append((words[1], words[2], words[3]))
        elif words[0] == "trace" and len(words) >= 3 and all("=" in w for w in words[2:]):
            bases, renames = words[1].split(","), [tuple(w.split("=", 1)) for w in words[2:]]
            for b in bases:
                names += [(b, frm, to) for frm, to in renames if frm in params.get(b, ())]
        else:
            sys.exit(f"gen.py: roles.txt: not a trace line: {line}")
        for b in bases:
            if b not in params:
                sys.exit(f"gen.py: roles.txt: {b} is not a declared base name")
        for frm, _ in renames:
            if not any(frm in params[b] for b in bases):
                sys.exit(f"gen.py: roles.txt: no parameter {frm} in {','.join(bases)}")
    return names, shown, nouns


def read_role_overrides(text):
    """roles.txt's lines: (function or base name, C parameter name) -> role."""
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.split()[0] in ("trace", "trace-as", "trace-noun") + PAIR_RULES:
            continue
        fn, param, role = line.split()
        parse_role(role)  # fails early on a misspelt role
        out[(fn, param)] = role
    return out


# How two optional pointers of one call go together (roles.txt's pair lines, `<rule>
# <function or base name> <first> <second>`): `either`, one of them at least is given;
# `both`, both or neither.
PAIR_RULES = ("either", "both")


# The pair lines some export took, to tell a line that names nothing.
USED_PAIRS = set()


def pair_key(name, base, param, pairs):
    return (name, param) if (name, param) in pairs else (base, param)


def read_pairs(text):
    """roles.txt's pair lines: (function or base name, first parameter) -> (rule, second)."""
    out = {}
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if words and words[0] in PAIR_RULES:
            if len(words) != 4:
                sys.exit(f"gen.py: roles.txt: not a pair line: {line}")
            rule, fn, first, second = words
            out[(fn, first)] = (rule, second)
    return out


def pair_of(name, base, param, pairs, cnames=None):
    """The pair line that names `param` of the export `name` first: (rule, second). A line
    applies to the exports of that name or base name that have both parameters
    (cuStreamGetCtx's applies to cuStreamGetCtx_v2 and its per-thread form, not to
    cuStreamGetCtx, which has no green context); one that applies to none is an error."""
    pair = pairs.get((name, param)) or pairs.get((base, param))
    if pair is not None and cnames is not None and pair[1] not in cnames:
        return None
    return pair


def parse_role(role):
    """`out?` -> ("out", True, ""); `array?:numOptions` -> ("array", True, "numOptions")."""
    m = re.fullmatch(r"(in|out|inout|string|host|callback|value|address|flags|enum|handle|array|outarray)(\?)?(?::(\w*))?", role)
    if not m:
        sys.exit(f"gen.py: roles.txt: unknown role {role}")
    return m.group(1), bool(m.group(2)), m.group(3) or ""


def split_ctype(ctype):
    """`const CUmemAccessDesc_v1 *` -> (base type name, pointer depth, pointee const)."""
    stars = ctype.count("*")
    words = ctype.replace("*", " * ").split()
    const = False
    base = []
    for w in words:
        if w == "*":
            break
        if w == "const":
            const = True
        elif w not in ("struct", "enum", "union"):
            base.append(w)
    return " ".join(base), stars, const


def resolve(types, name):
    """The kind of a C type name through its aliases: ("handle"|"enum"|"struct"|"fn"|
    "scalar"|"platform", canonical name)."""
    seen = name
    while True:
        if name in C_SCALARS:
            return "scalar", types.canonical(seen), name
        if name in PLATFORM_TYPES:
            return "platform", name, name
        k = types.kind.get(name)
        if k is None:
            return "unknown", name, name
        if k[0] == "alias":
            name = k[1]
            continue
        return k[0], types.canonical(seen), name


def read_optional(text):
    """The pointer parameters cuda.h's documentation says may be NULL ("Optional
    location...", "Can be NULL..."): {(function, parameter)}."""
    out = set()
    decl = r"/\*\*((?:(?!\*/).)*?)\*/\s*(?:__CUDA_DEPRECATED\s+)?CUresult\s+CUDAAPI\s+(\w+)\s*\("
    for m in re.finditer(decl, text, re.S):
        doc, fn = m.groups()
        for p in re.finditer(r"\\param\s+(\w+)\s+(.*?)(?=\\param|\\return|\\note|\\sa|$)", doc, re.S):
            said = " ".join(p.group(2).replace("*", " ").split())
            if re.search(r"\boptional|\b(may|can) be NULL|\bif NULL", said, re.I):
                out.add((fn, p.group(1)))
        # Said in the description: "A NULL may be passed in for \p *leastPriority or \p
        # *greatestPriority", "\p pctx may be NULL".
        text1 = " ".join(doc.replace("*", " ").split())
        for m2 in re.finditer(r"NULL may be passed (?:in )?for ((?:\\p \w+(?: or | and |, )?)+)", text1):
            out |= {(fn, n) for n in re.findall(r"\\p (\w+)", m2.group(1))}
        for n in re.findall(r"\\p (\w+) (?:may|can) be NULL", text1):
            out.add((fn, n))
    # cuda.h declares a function under its newest export's name (`#define cuMemGetInfo
    # cuMemGetInfo_v2`): the documentation is the base name's.
    for alias, name in re.findall(r"^\s*#\s*define\s+(cu\w+)\s+(cu\w+)\s*$", text, re.M):
        out |= {(alias, p) for f, p in list(out) if f == name}
    return out


POINTER_ROLES = {"in", "out", "inout", "string", "array", "outarray"}


def derive_roles(name, base, params, types, handles, overrides, optional=frozenset(), pairs=None):
    """Each parameter's role, in order, as roles.txt spells it: roles.txt's line where
    there is one, else from the C type and name, a pointer nullable where cuda.h's
    documentation says it may be NULL, or where a pair line of roles.txt names it."""
    cnames = [n.rstrip("_") if n.rstrip("_") in RUST_KEYWORDS else n for n, r, c in params]
    roles = []
    for i, (n, r, c) in enumerate(params):
        cname = cnames[i]
        over = overrides.get((name, cname)) or overrides.get((base, cname))
        if over is not None:
            roles.append(over)
            continue
        tname, depth, const = split_ctype(c)
        kind, canon, leaf = resolve(types, tname)
        if depth == 0:
            if canon in VALUE_HANDLES or (kind == "handle"):
                roles.append(f"handle:{canon}")
            elif kind == "enum":
                roles.append(f"enum:{canon}")
            elif kind == "fn":
                roles.append("callback")
            elif canon in ("CUdeviceptr",):
                roles.append("address")
            elif re.search(r"flags$", cname, re.I) and leaf in INTEGERS:
                roles.append("flags")
            else:
                roles.append("value")
            continue
        if tname == "void" and depth == 1:
            roles.append("host")
            continue
        if tname == "char" and depth == 1:
            # A string the driver reads, or a buffer it writes a string to.
            roles.append("string" if const else f"outarray:{counted_by(i, params, cnames, types)}")
            continue
        if depth >= 2:
            # A pointer to a pointer the driver fills (`const char **pStr`, `void **pp`).
            roles.append("out")
            continue
        # One level of pointer to a typed value: an array where a count is beside it.
        count = counted_by(i, params, cnames, types)
        if count:
            # cuda.h leaves out many an input array's `const` (cuMemcpyBatchAsync's
            # `sizes`): a counted array is read unless its count is written back, or
            # roles.txt says the driver fills it.
            if tname != "char" and split_ctype(params[cnames.index(count)][2])[1] == 0:
                roles.append(f"array:{count}")
            elif split_ctype(params[cnames.index(count)][2])[1] == 1:
                # `CUgraphNode *nodes, size_t *numNodes`: the driver fills up to *numNodes
                # and says how many there are; NULL asks for the count alone.
                roles.append(f"outarray?:{count}")
            else:
                roles.append(f"outarray:{count}")
        else:
            roles.append("in" if const else "out")
    for i, role in enumerate(roles):
        k, nullable, arg = parse_role(role)
        said = (name, cnames[i]) in optional or (base, cnames[i]) in optional
        if k in POINTER_ROLES and not nullable and said and (name, cnames[i]) not in overrides and (base, cnames[i]) not in overrides:
            roles[i] = f"{k}?:{arg}" if ":" in role else f"{k}?"
    # The two pointers of a pair line may each be NULL (the rule says when not both).
    for i, cname in enumerate(cnames):
        pair = pair_of(name, base, cname, pairs or {}, cnames)
        if pair is None:
            continue
        USED_PAIRS.add(pair_key(name, base, cname, pairs))
        for j in (i, cnames.index(pair[1])):
            k, nullable, arg = parse_role(roles[j])
            if k not in POINTER_ROLES:
                sys.exit(f"gen.py: roles.txt: {name}'s {cnames[j]} is paired but not a pointer")
            if not nullable:
                roles[j] = f"{k}?:{arg}" if ":" in roles[j] else f"{k}?"
    # A count that a filled array reads and rewrites is in-out.
    for i, role in enumerate(roles):
        k, nullable, count = parse_role(role)
        if k == "outarray" and count and count in cnames:
            j = cnames.index(count)
            if split_ctype(params[j][2])[1] == 1 and (name, count) not in overrides:
                roles[j] = "inout"
    return roles


def counted_by(i, params, cnames, types):
    """The count parameter of the array parameter `i`, or "": a count beside it whose name
    names it (`numAttributes` for `attributes`), else the count right after it that names
    no other parameter (`desc, count`)."""

    def is_count(j):
        if not (0 <= j < len(params)) or not COUNT_NAME.match(cnames[j]):
            return False
        ctn, cdepth, _ = split_ctype(params[j][2])
        return resolve(types, ctn)[2] in INTEGERS and cdepth <= 1

    def names(j, k):
        stem = re.sub(r"^num|^n(?=[A-Z])|Count$", "", cnames[j]).lower()
        return bool(stem) and stem.rstrip("s") in cnames[k].lower()

    for j in (i + 1, i - 1, i + 2, i - 2):
        if is_count(j) and names(j, i):
            return cnames[j]
    j = i + 1
    if is_count(j) and not any(names(j, k) for k in range(len(params)) if k not in (i, j)):
        return cnames[j]
    return ""


def role_word(role, pointers=(), pair=None):
    """A role as the one word `declaration!` hands an implementation's conversion;
    `pointers`: the names of the export's pointer parameters; `pair`: the pair line that
    names the parameter first, (rule, second)."""
    k, nullable, arg = parse_role(role)
    if pair is not None:
        # The first of two optional pointers, with the second's name: the conversion checks
        # the two together (`either(pGreenCtx)`).
        return f"{pair[0]}({pair[1]})"
    if k == "outarray" and arg in pointers:
        # An array the driver fills, up to the count the program gives in the in-out
        # parameter `arg`, which the driver rewrites.
        return f"filled({arg})"
    if k == "outarray" and arg and not nullable:
        # Room for values the driver writes, as many as the by-value parameter `arg` says.
        return f"room({arg})"
    if k == "array" and arg:
        # An array the driver reads, with the by-value parameter that counts it.
        return f"array{'_opt' if nullable else ''}({arg})"
    word = {"value": "value", "address": "address", "enum": "enumeration", "flags": "flags",
            "handle": "handle", "in": "input", "out": "output", "string": "string"}.get(k, "raw")
    return word + "_opt" if nullable and word in ("input", "output", "string") else word


def rust_role(role):
    """A role of roles.txt as api.rs's `Role` value."""
    k, nullable, arg = parse_role(role)
    nb = "true" if nullable else "false"
    return {
        "in": f"Role::In {{ nullable: {nb} }}",
        "out": f"Role::Out {{ nullable: {nb} }}",
        "inout": f"Role::InOut {{ nullable: {nb} }}",
        "string": f"Role::String {{ nullable: {nb} }}",
        "host": "Role::HostMemory",
        "callback": "Role::Callback",
        "value": "Role::Value",
        "address": "Role::DeviceAddress",
        "flags": f'Role::Flags("{arg}")',
        "enum": f'Role::Enum("{arg}")',
        "handle": f'Role::Handle("{arg}")',
        "array": f'Role::Array {{ count: "{arg}", nullable: {nb} }}',
        "outarray": f'Role::OutArray {{ count: "{arg}", nullable: {nb} }}',
    }[k]


RUST_KEYWORDS = set(
    "as break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while async await dyn abstract become box do final macro override priv typeof unsized virtual yield try gen".split()
)


def rust_ident(name):
    return name + "_" if name in RUST_KEYWORDS else name


def main():
    inc = Path(sys.argv[1])
    check = "--check" in sys.argv
    types = Types()
    for h in TYPE_HEADERS:
        types.read((inc / h).read_text())
    mapper = Mapper(types)
    groups, member = {}, {}
    for h in TYPE_HEADERS:
        read_groups((inc / h).read_text(), groups, member)
    for gid, title in HEADER_GROUPS.values():
        groups.setdefault(gid, title)

    # Every PFN typedef: (base, version, suffix) -> C parameter list.
    pfns = {}
    group_of = {}  # base -> group id
    for h in TYPEDEF_HEADERS:
        for m in re.finditer(
            r"typedef\s+(\w+)\s*\(\s*CUDAAPI\s*\*\s*PFN_(\w+?)_v(\d+)(_ptds|_ptsz)?\s*\)\s*\((.*?)\)\s*;",
            (inc / h).read_text(),
            re.S,
        ):
            ret, base, ver, suffix, params = m.groups()
            if ret != "CUresult":
                sys.exit(f"gen.py: PFN_{base}_v{ver} returns {ret}, not CUresult")
            params = re.sub(r"\bCUDAAPI\b", " ", " ".join(params.split()))
            pfns[(base, int(ver), suffix or "")] = params
            group = member.get(base) or UNGROUPED.get(base) or HEADER_GROUPS.get(h, (None,))[0]
            if group is None:
                sys.exit(f"gen.py: {base} ({h}) is in no doxygen group of the headers")
            group_of[base] = merged(group, groups)
    traits = {gid: trait_name(title) for gid, title in groups.items()}

    exports = set(EXPORTS)
    # Which export each PFN is: the plain versions of a base name, oldest first, are the
    # exported names base, base_v2, base_v3... aligned from the newest (the oldest
    # versions of some functions are no longer exported); a _ptds/_ptsz version is the
    # exported plain name current at that version with the suffix.
    decl = {}  # export -> (base, version, variant, params)
    by_base = {}
    for base, ver, suffix in pfns:
        by_base.setdefault(base, []).append((ver, suffix))
    unexported = []
    for base in sorted(by_base):
        plain = sorted(v for v, s in by_base[base] if s == "")
        names = [n for n in [base] + [f"{base}_v{i}" for i in range(2, 10)] if n in exports]
        names = [None] * max(0, len(plain) - len(names)) + names
        sym_of = dict(zip(plain, names[len(names) - len(plain):]))
        for ver in plain:
            sym = sym_of[ver]
            if sym:
                decl[sym] = (base, ver, "", pfns[(base, ver, "")])
            else:
                unexported.append(f"PFN_{base}_v{ver}")
        for ver, suffix in sorted(v for v in by_base[base] if v[1]):
            older = [p for p in plain if p <= ver] or plain
            sym = sym_of.get(older[-1]) if older else None
            cands = [f"{sym}{s}" for s in (suffix, "_ptds", "_ptsz")] if sym else []
            found = [c for c in cands if c in exports]
            if found:
                decl[found[0]] = (base, ver, suffix[1:], pfns[(base, ver, suffix)])
            else:
                unexported.append(f"PFN_{base}_v{ver}{suffix}")

    overrides = read_role_overrides(ROLES_FILE.read_text())
    pairs = read_pairs(ROLES_FILE.read_text())
    optional = read_optional((inc / "cuda.h").read_text())
    rows = []
    for name in EXPORTS:
        if name in decl:
            base, ver, variant, params = decl[name]
            ps = [mapper.param(p, i) for i, p in enumerate(split_params(params))]
            params = [(rust_ident(n), r, c) for n, r, c in ps]
            roles = derive_roles(name, base, params, types, mapper.handles, overrides, optional, pairs)
            params = [(n, r, c, role) for (n, r, c), role in zip(params, roles)]
            rows.append((name, base, ver, variant, params, traits[group_of[base]]))
        else:
            rows.append((name, None, None, None, None, None))

    for unused in sorted(set(pairs) - USED_PAIRS):
        sys.exit(f"gen.py: roles.txt: the pair line of {unused[0]}'s {unused[1]} names no export's parameters")
    # The traits in the headers' order, those with a declared export only.
    used = {r[5] for r in rows if r[5]}
    trait_groups = [
        (traits[g], g, groups[g], f"{g}_DEPRECATED" if f"{g}_DEPRECATED" in groups else None)
        for g in groups
        if merged(g, groups) == g and traits[g] in used
    ]
    cuda_version = int(re.search(r"#define CUDA_VERSION (\d+)", (inc / "cuda.h").read_text()).group(1))
    api = render_api(rows, mapper, unexported, trait_groups, cuda_version, pairs)
    trace = read_trace_lines(ROLES_FILE.read_text(), rows)
    generated = render_generated(cuda_h=(inc / "cuda.h").read_text(), rows=rows, trace=trace)
    outputs = {ABI / "src/api.rs": api, ABI / "src/generated.rs": generated}
    stale = []
    for path, text in outputs.items():
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.write_text(text)
    if stale:
        sys.exit("stale (rerun abi/gen/gen.py): " + ", ".join(stale))
    declared = sum(1 for r in rows if r[1])
    print(f"{len(rows)} exports, {declared} declared from the headers, {len(rows) - declared} without a declaration", file=sys.stderr)


def per_thread_plains(rows):
    """Each `_ptds`/`_ptsz` export whose plain export (the same name without the suffix)
    has the same signature (its parameters' Rust types: cuda.h may spell one type two
    ways, `CUstreamBatchMemOpParams_v1 *` and `CUstreamBatchMemOpParams *`): the plain
    one's name. Its default runs the plain export."""
    params_of = {r[0]: r[4] for r in rows if r[1]}
    out = {}
    for name, base, ver, variant, params, trait in rows:
        if variant not in ("ptds", "ptsz"):
            continue
        plain = name[: -len("_" + variant)]
        if plain in params_of and [r for _, r, _, _ in params_of[plain]] == [r for _, r, _, _ in params]:
            out[name] = plain
    return out


def newest_of_same_signature(rows):
    """Each plain export (`cuCtxDestroy`) with a newer plain export of the same base name
    whose parameters have the same Rust types in the same order (`cuCtxDestroy_v2`): the
    newest such export's name. Its default runs that one, which is what cuGetProcAddress
    hands current programs, so a modern call takes no extra hop. Only older to newer, so
    two defaults never call each other; an export whose behaviour differs from the newer
    one's is written by the implementation (which overrides the default)."""
    same = {}  # (base, Rust types) -> [(version, name)]
    for name, base, ver, variant, params, trait in rows:
        if base is None or variant:
            continue
        same.setdefault((base, tuple(r for _, r, _, _ in params)), []).append((ver, name))
    out = {}
    for exports in same.values():
        newest = max(exports)[1]
        for ver, name in exports:
            if name != newest:
                out[name] = newest
    return out


def entry_points(rows, cuda_version):
    """What cuGetProcAddress gives for each base name at `cuda_version` with the legacy
    default stream (procaddress.rs's rule): the newest plain export not newer than it.
    Base name -> (symbol, params), in base-name order."""
    current = {}
    for name, base, ver, variant, params, trait in rows:
        if base is None or variant or ver > cuda_version:
            continue
        if base not in current or ver > current[base][0]:
            current[base] = (ver, name, params)
    return {b: current[b][1:] for b in sorted(current)}


def borrowed(r):
    """The type a caller that holds a reference passes: an outer `*mut T` as `&mut T`,
    `*const T` as `&T` (the same ABI; the reference promises one live `T`)."""
    if r.startswith("*mut "):
        return "&mut " + r[len("*mut "):]
    if r.startswith("*const "):
        return "&" + r[len("*const "):]
    return r


def render_api(rows, mapper, unexported, trait_groups, cuda_version, pairs=None):
    plain_of = per_thread_plains(rows)
    newer_of = newest_of_same_signature(rows)
    out = [
        "// Generated by abi/gen/gen.py from NVIDIA's cuda.h, cudaTypedefs.h and the GL, EGL,",
        "// VDPAU and profiler headers (CUDA 13.0). Do not edit: rerun the generator.",
        "#![allow(non_snake_case, non_camel_case_types, clippy::too_many_arguments, clippy::missing_safety_doc, unused_variables)]",
        "",
        "use crate::*;",
        "",
        "/// The C types of the declared signatures, as Rust ABI types.",
        "pub mod types {",
        "    #[allow(unused_imports)]",
        "    use crate::*;",
    ]
    for name in sorted(mapper.used):
        for line in mapper.used[name].split("\n"):
            out.append(f"    {line}")
    out.append("}")
    out.append("")
    # The table.
    out.append("/// Every export of the real driver (580.159.04), in its order.")
    out.append("pub const EXPORTS: &[Export] = &[")
    for name, base, ver, variant, params, trait in rows:
        if base is None:
            out.append(f'    Export {{ name: "{name}", proc: None, params: None, group: None }},')
            continue
        ps = ", ".join(
            f'Param {{ name: "{n}", c_type: "{c}", rust_type: "{r}", size: ::std::mem::size_of::<{r}>(), role: {rust_role(role)} }}'
            for n, r, c, role in params
        )
        out.append(
            f'    Export {{ name: "{name}", proc: Some(Proc {{ base: "{base}", version: {ver}, variant: "{variant}" }}), params: Some(&[{ps}]), group: Some("{trait}") }},'
        )
    out.append("];")
    out.append("")
    # The traits.
    out.append("/// What every group's trait shares: the outcome of a call, and that of a call the")
    out.append("/// implementation does not write.")
    out.append("pub trait ApiOutcome {")
    out.append("    /// What every method returns (the mock's `CuResult<()>`).")
    out.append("    type Outcome;")
    out.append("    /// The outcome of an export that is not emulated.")
    out.append("    fn not_emulated(name: &'static str) -> Self::Outcome;")
    out.append("    /// Whether a `_ptds`/`_ptsz` export the implementation does not write runs as its")
    out.append("    /// plain export of the same signature (through `per_thread_default_stream` and")
    out.append("    /// `per_thread_stream`) rather than as not emulated.")
    out.append("    const FORWARD_PER_THREAD_VARIANTS: bool = false;")
    out.append("    /// Whether an older plain export the implementation does not write (`cuCtxDestroy`)")
    out.append("    /// runs as the newest plain export of its base name with the same parameter types")
    out.append("    /// (`cuCtxDestroy_v2`) rather than as not emulated.")
    out.append("    const FORWARD_OLDER_VERSIONS: bool = false;")
    out.append("    /// A `_ptds` export: the plain export's call, made with the calling thread's")
    out.append("    /// per-thread stream as the default stream.")
    out.append("    fn per_thread_default_stream(call: impl FnOnce() -> Self::Outcome) -> Self::Outcome {")
    out.append("        call()")
    out.append("    }")
    out.append("    /// A `_ptsz` export's stream argument: the default stream (NULL) is the calling")
    out.append("    /// thread's per-thread stream.")
    out.append("    fn per_thread_stream(stream: CUstream) -> CUstream {")
    out.append("        stream")
    out.append("    }")
    out.append("}")
    for trait, gid, title, deprecated in trait_groups:
        also = f" with `{deprecated}`" if deprecated else ""
        out.append("")
        out.append(f"/// {title}: the headers' group `{gid}`{also}.")
        out.append("/// One method per declared export, each with the signature the headers give it. A")
        out.append("/// method the implementation does not write is not emulated: it returns what")
        out.append("/// `not_emulated` gives.")
        out.append(f"pub trait {trait}: ApiOutcome {{")
        for name, base, ver, variant, params, t in rows:
            if t != trait:
                continue
            sig = ", ".join(f"{n}: {r}" for n, r, c, _role in params)
            out.append(f"    unsafe fn {name}({sig}) -> Self::Outcome {{")
            plain = plain_of.get(name)
            if plain:
                out.append("        if Self::FORWARD_PER_THREAD_VARIANTS {")
                if variant == "ptds":
                    args = ", ".join(n for n, r, c, _role in params)
                    out.append(f"            return Self::per_thread_default_stream(|| unsafe {{ Self::{plain}({args}) }});")
                else:
                    args = ", ".join(
                        f"Self::per_thread_stream({n})" if r == "CUstream" else n for n, r, c, _role in params
                    )
                    out.append(f"            return Self::{plain}({args});")
                out.append("        }")
            newer = newer_of.get(name)
            if newer:
                args = ", ".join(n for n, r, c, _role in params)
                out.append("        if Self::FORWARD_OLDER_VERSIONS {")
                out.append(f"            return Self::{newer}({args});")
                out.append("        }")
            out.append(f'        Self::not_emulated("{name}")')
            out.append("    }")
        out.append("}")
    bounds = " + ".join(["ApiOutcome"] + [t[0] for t in trait_groups])
    out.append("")
    out.append("/// The whole driver API: every group's trait. Implemented for whatever implements them")
    out.append("/// all.")
    out.append(f"pub trait DriverApi: {bounds} {{}}")
    out.append("")
    out.append(f"impl<T: {bounds}> DriverApi for T {{}}")
    out.append("")
    # The macro that calls back with every declaration.
    out.append("/// Calls `$callback!` with every export, in two lists: `declared { name(arg: type |")
    out.append("/// erased, ...) in Trait; ... }` for those the headers declare, `undeclared { name, ...")
    out.append("/// }` for the rest (the debugger's cudbg* symbols and a few internal ones, whose")
    out.append("/// signatures are unknown). `type` is the declared type; `erased` is the same with every")
    out.append("/// handle (`CUcontext`, `CUstream`...) as `*mut c_void`, for callers that keep handles")
    out.append("/// of all kinds in one table; `Trait` is the group's trait that declares the method.")
    out.append("/// Types are paths that resolve in any crate.")
    out.append("#[macro_export]")
    out.append("macro_rules! for_each_export {")
    out.append("    ($callback:ident) => {")
    out.append("        $callback! {")
    out.append("            declared {")
    for name, base, ver, variant, params, trait in rows:
        if base is not None:
            sig = ", ".join(f"{n}: {qualify(r)} | {erase(r, mapper.handles)}" for n, r, c, _role in params)
            out.append(f"                {name}({sig}) in {trait};")
    out.append("            }")
    out.append("            undeclared {")
    for name, base, ver, variant, params, trait in rows:
        if base is None:
            out.append(f"                {name},")
    out.append("            }")
    out.append("        }")
    out.append("    };")
    out.append("}")
    out.append("")
    # The entry points at the headers' version, by base name.
    current = entry_points(rows, cuda_version)
    out.append("/// The CUDA version of the headers (cuda.h's `CUDA_VERSION`): the version")
    out.append("/// [`entry_point!`] resolves base names at.")
    out.append(f"pub const CUDA_VERSION: u32 = {cuda_version};")
    out.append("")
    out.append("/// Every base name and the export cuGetProcAddress gives for it at [`CUDA_VERSION`]")
    out.append("/// with the legacy default stream, as [`entry_point!`] declares them.")
    out.append("pub const ENTRY_POINTS: &[(&str, &str)] = &[")
    for base, (name, params) in current.items():
        out.append(f'    ("{base}", "{name}"),')
    out.append("];")
    out.append("")
    out.append("/// The entry point cuGetProcAddress gives for a base name at [`CUDA_VERSION`] with the")
    out.append("/// legacy default stream (`cuMemAlloc` is `cuMemAlloc_v2`): `entry_point!(cuMemAlloc,")
    out.append("/// callback)` calls `callback! { cuMemAlloc = cuMemAlloc_v2(dptr: *mut CUdeviceptr |")
    out.append("/// &mut CUdeviceptr, bytesize: usize | usize) }`, each parameter with its declared type")
    out.append("/// and the type a caller holding references passes (an outer `*mut T` as `&mut T`,")
    out.append("/// `*const T` as `&T`). A name without an arm is not a base name the headers declare.")
    out.append("/// Types are paths that resolve in any crate.")
    out.append("#[macro_export]")
    out.append("macro_rules! entry_point {")
    for base, (name, params) in current.items():
        sig = ", ".join(f"{n}: {qualify(r)} | {qualify_borrowed(r)}" for n, r, c, _role in params)
        out.append(f"    ({base}, $callback:ident) => {{ $callback! {{ {base} = {name}({sig}) }} }};")
    out.append("}")
    out.append("")
    # Each declared export with its parameters' roles, for an implementation's argument
    # conversion.
    out.append("/// Each declared export with its parameters' roles: `declaration!(cuMemCreate,")
    out.append("/// callback!(tokens))` calls `callback! { tokens [cuMemCreate in VirtualMemoryApi] (handle:")
    out.append("/// *mut CUmemGenericAllocationHandle => output, size: usize => value, ...) }`. A role is")
    out.append("/// [`Role`] as one word: `value`, `address`, `enumeration`, `flags`, `handle`, `input`,")
    out.append("/// `input_opt`, `output`, `output_opt`, `string`, `string_opt`; `array(count)` and")
    out.append("/// `array_opt(count)` for an array the driver reads, with the parameter that counts it;")
    out.append("/// `filled(count)` for an array the driver fills, counted by the in-out `count`;")
    out.append("/// `room(count)` for room the driver writes into, as many values as `count` says;")
    out.append("/// `either(second)` and `both(second)` for the first of two optional pointers that")
    out.append("/// go together, one at least given or both or neither (roles.txt's pair lines);")
    out.append("/// `raw` for what an implementation reads itself (in-out values, the")
    out.append("/// program's untyped memory, callbacks). Types are paths that resolve in any crate.")
    out.append("#[macro_export]")
    out.append("macro_rules! declaration {")
    for name, base, ver, variant, params, trait in rows:
        if base is None:
            continue
        pointers = {n for n, r, c, role in params if r.startswith("*")}
        cnames = [n.rstrip("_") for n, r, c, role in params]
        sig = ", ".join(
            f"{n}: {qualify(r)} => {role_word(role, pointers, pair_of(name, base, n.rstrip('_'), pairs or {}, cnames))}"
            for n, r, c, role in params
        )
        out.append(f"    ({name}, $callback:ident!($($pass:tt)*)) => {{ $callback! {{ $($pass)* [{name} in {trait}] ({sig}) }} }};")
    out.append("}")
    out.append("")
    for u in unexported:
        out.append(f"// In the headers, not exported by 580.159.04: {u}")
    return "\n".join(out) + "\n"


def erase(r, handles):
    """The type with every handle as `*mut c_void`: the same ABI, for callers that keep
    handles of all kinds in one table (the harness)."""
    m = re.fullmatch(r"((?:\*(?:const|mut) )*)(.*)", r)
    ptrs, base = m.groups()
    if base in handles:
        return qualify(ptrs + "*mut ::std::ffi::c_void")
    return qualify(r)


def qualify(r):
    """A Rust type as a path that resolves in any crate that names cumock_abi."""
    m = re.fullmatch(r"((?:\*(?:const|mut) )*)(.*)", r)
    ptrs, base = m.groups()
    if base.startswith("::") or re.fullmatch(r"[iuf](8|16|32|64|size)", base):
        return ptrs + base
    return f"{ptrs}$crate::{base}"


def qualify_borrowed(r):
    b = borrowed(r)
    m = re.fullmatch(r"((?:&mut |&)?)(.*)", b)
    return m.group(1) + qualify(m.group(2))


def enum_body(cuda_h, name):
    m = re.search(r"typedef enum %s\s*\{(.*?)\}" % re.escape(name), cuda_h, re.S)
    if not m:
        sys.exit(f"enum {name} not found")
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    out = []
    for ident, value in re.findall(r"(\w+)\s*=\s*([^,\n]+)", body):
        value = value.strip()
        try:
            v = int(eval(value.replace("U", "")))
        except Exception:
            continue
        out.append((ident, v))
    return out


def render_generated(cuda_h, rows, trace):
    def table(rust_name, items):
        lines = [f"pub const {rust_name}: &[(&str, i64)] = &["]
        lines += [f'    ("{n}", {v}),' for n, v in items]
        lines.append("];")
        return "\n".join(lines)

    out = [
        "// Generated by abi/gen/gen.py from NVIDIA's cuda.h and cudaTypedefs.h (CUDA 13.0).",
        "// Do not edit: rerun the generator.",
        "",
        table("CU_RESULTS", enum_body(cuda_h, "cudaError_enum")),
        "",
        table("CU_DEVICE_ATTRIBUTES", enum_body(cuda_h, "CUdevice_attribute_enum")),
        "",
        table("CU_POINTER_ATTRIBUTES", enum_body(cuda_h, "CUpointer_attribute_enum")),
        "",
    ]
    # Every enum typedef of cuda.h with its named values, for the trace's names of enum
    # and flags parameters (a value cuda.h writes as an expression of others is left out).
    enums = []
    for tag, name in re.findall(r"typedef\s+enum\s+(\w+)\s*\{.*?\}\s*(\w+)\s*;", cuda_h, re.S):
        items = enum_body(cuda_h, tag)
        if items and name not in {n for n, _ in enums}:
            enums.append((name, items))
    out.append("/// Every enum of cuda.h by its typedef name, with its values by name.")
    out.append("pub const ENUMS: &[(&str, &[(&str, i64)])] = &[")
    for name, items in sorted(enums):
        out.append(f'    ("{name}", &[')
        out += [f'        ("{n}", {v}),' for n, v in items]
        out.append("    ]),")
    out.append("];")
    out.append("")
    names, shown, nouns = trace
    out.append("/// The trace's own names for parameters (roles.txt's `trace` lines): base name,")
    out.append("/// parameter, name in the trace.")
    out.append("pub const TRACE_NAMES: &[(&str, &str, &str)] = &[")
    out += [f'    ("{b}", "{p}", "{n}"),' for b, p, n in names]
    out.append("];")
    out.append("")
    out.append("/// How the trace shows a value its role does not say (roles.txt's `trace-as` lines):")
    out.append("/// base name, parameter, how.")
    out.append("pub const TRACE_AS: &[(&str, &str, &str)] = &[")
    out += [f'    ("{b}", "{p}", "{h}"),' for b, p, h in shown]
    out.append("];")
    out.append("")
    out.append("/// The trace's words for handle types (roles.txt's `trace-noun` lines).")
    out.append("pub const TRACE_NOUNS: &[(&str, &str)] = &[")
    out += [f'    ("{t}", "{w}"),' for t, w in nouns]
    out.append("];")
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    main()
