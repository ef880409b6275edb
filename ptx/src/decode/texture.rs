//! Texture and surface instructions (`tex`, `tld4`, `txq`, `suld.b`, `sust.b`, `sured`, `suq`)
//! decoded into [`ImageOp`]: the object handle, the coordinate operands as written, and
//! what to do at the image's edges. The sampling itself is `crate::texture`'s.
//!
//! The image is a texture or surface object (a 64-bit handle in a register or parameter)
//! or a module-scope `.texref`/`.surfref` (the deprecated reference API), named directly
//! or through the handle `mov` gives (`crate::REFERENCE_WINDOW`): the driver resolves
//! both kinds of handle to what it bound (`Memory::texture`). Mipmaps (`tex.level`, `tex.grad`, `txq.level`,
//! `txq.num_mipmap_levels`) and cubemaps (`.cube`, `.acube`, for `tex` and `tld4`) are
//! emulated, and so are texel offsets (`tex` and `tld4`'s `e` operand) and the residency
//! predicate (`d|p`: the mock has no sparse textures, so every texel is resident);
//! formatted surface stores (`sust.p`) convert their 32-bit values to the surface's
//! format; `tex.grad` on cubemaps takes the direction's derivatives; multisample
//! geometries are unsupported, saying so at load. An explicit sampler (`[t, s, c]`,
//! independent texturing mode) is a module-scope `.samplerref`.

use super::{semantic, unsupported, Dst, FuncDecoder, Mods, Op, Src};
use crate::math::Ty;
use crate::parse::{InstAst, Opnd, SamplerDecl};
use crate::texture::AddressMode;
use crate::{LoadError, LoadErrorKind};

/// An explicit sampler (`tex` and `tld4`'s operand b, independent texturing mode): a
/// module-scope `.samplerref` and its initialiser. In independent mode the sampler's
/// filter and address modes replace the texture's, and `force_unnormalized_coords`
/// makes normalized coordinates unnormalized (the ISA's sampler properties); a field the
/// initialiser leaves out the ISA leaves to the runtime, and CUDA's driver sets none:
/// here the texture object's own setting stays (a choice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SamplerRef {
    /// `filter_mode`: linear (true) or nearest (false).
    pub linear: Option<bool>,
    /// `addr_mode_0`..`addr_mode_2`.
    pub address: [Option<AddressMode>; 3],
    pub force_unnormalized: bool,
}

/// A `.samplerref`'s initialiser as a [`SamplerRef`]; a member or value the ISA does not
/// define is a load error, and so is `clamp_ogl` (OpenGL's GL_CLAMP, which blends the
/// border into edge texels by a rule CUDA's texture objects have no mode for).
pub(super) fn sampler_ref(d: &SamplerDecl) -> Result<SamplerRef, LoadError> {
    let err = |kind, msg: String| LoadError::at(d.line, d.column, kind, msg);
    let mut s = SamplerRef::default();
    for (member, value) in &d.fields {
        let bad = || {
            err(
                LoadErrorKind::Semantic,
                format!(
                    "`{member} = {value}` is not a sampler field of `{}`",
                    d.name
                ),
            )
        };
        match member.as_str() {
            "filter_mode" => {
                s.linear = Some(match value.as_str() {
                    "nearest" => false,
                    "linear" => true,
                    _ => return Err(bad()),
                })
            }
            "addr_mode_0" | "addr_mode_1" | "addr_mode_2" => {
                let k = (member.as_bytes()[10] - b'0') as usize;
                s.address[k] = Some(match value.as_str() {
                    "wrap" => AddressMode::Wrap,
                    "mirror" => AddressMode::Mirror,
                    "clamp_to_edge" => AddressMode::Clamp,
                    "clamp_to_border" => AddressMode::Border,
                    "clamp_ogl" => {
                        return Err(err(
                            LoadErrorKind::Unsupported,
                            format!(
                                "sampler `{}`: addr_mode clamp_ogl (OpenGL's GL_CLAMP) is not \
                                 emulated",
                                d.name
                            ),
                        ))
                    }
                    _ => return Err(bad()),
                })
            }
            "force_unnormalized_coords" => {
                s.force_unnormalized = match value.as_str() {
                    "0" => false,
                    "1" => true,
                    _ => return Err(bad()),
                }
            }
            _ => return Err(bad()),
        }
    }
    Ok(s)
}

/// What `tex` writes: four 32-bit values (`.v4.{f32,s32,u32}`), four f16s (`.v4.f16`) or
/// two f16 pairs (`.v2.f16x2`, x and z in the low halves).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    Word,
    F16,
    F16x2,
}

/// A texture's or surface's geometry, as the instruction names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Geom {
    D1,
    D2,
    D3,
    /// `.a1d`, `.a2d`: layered; the layer index comes first in the coordinates.
    A1,
    A2,
    /// `.cube`, `.acube` (textures only): a direction (x, y, z); `.acube` puts the
    /// cube's index in a cubemap array first.
    Cube,
    ACube,
}

impl Geom {
    /// Coordinates of the image (not counting the layer).
    pub fn dims(self) -> usize {
        match self {
            Geom::D1 | Geom::A1 => 1,
            Geom::D2 | Geom::A2 => 2,
            Geom::D3 | Geom::Cube | Geom::ACube => 3,
        }
    }

    pub fn layered(self) -> bool {
        matches!(self, Geom::A1 | Geom::A2 | Geom::ACube)
    }

    pub fn cube(self) -> bool {
        matches!(self, Geom::Cube | Geom::ACube)
    }

    fn from_mods(m: &mut Mods) -> Option<Geom> {
        Some(
            match m.take_any(&["1d", "2d", "3d", "a1d", "a2d"])?.as_str() {
                "1d" => Geom::D1,
                "2d" => Geom::D2,
                "3d" => Geom::D3,
                "a1d" => Geom::A1,
                _ => Geom::A2,
            },
        )
    }
}

/// What `txq` and `suq` ask of an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageQuery {
    Width,
    Height,
    Depth,
    ArraySize,
    /// `txq.num_mipmap_levels`.
    MipmapLevels,
    /// `txq`'s sampler queries in unified texturing mode (the texture object's sampler
    /// state): `.filter_mode`, `.addr_mode_{0,1,2}` (the dimension), `.normalized_coords`
    /// and `.force_unnormalized_coords`.
    FilterMode,
    AddrMode(u8),
    NormalizedCoords,
    ForceUnnormalizedCoords,
    /// `txq.channel_data_type`, `.channel_order`, `.num_samples`: values the ISA leaves
    /// to "the source language API". Decoded so that a module asking them loads as on the
    /// H200 (whose JIT compiles no code for the kernel: `Kernel::nvidia_jit_refuses`);
    /// their values are not emulated, and executing one faults.
    ChannelDataType,
    ChannelOrder,
    NumSamples,
}

impl ImageOp {
    /// Every register operand the instruction reads (handles, coordinates, levels of
    /// detail, derivatives, texel offsets, stored values): what compiled code must have
    /// written to the register file before the sampling code runs it (`jit::lower`'s
    /// liveness). Samplers are module-scope `.samplerref`s, no register.
    pub fn sources(&self) -> Vec<Src> {
        let offsets = |o: &Option<[Src; 3]>| o.map(|e| e.to_vec()).unwrap_or_default();
        match self {
            ImageOp::Tex {
                handle,
                coords,
                lod,
                offset,
                ..
            } => {
                let mut v = vec![*handle];
                v.extend(coords);
                match lod {
                    LodOperand::Base => {}
                    LodOperand::Level(l) => v.push(*l),
                    LodOperand::Grad(dx, dy) => {
                        v.extend(dx);
                        v.extend(dy);
                    }
                }
                v.extend(offsets(offset));
                v
            }
            ImageOp::Tld4 {
                handle,
                coords,
                offset,
                ..
            } => {
                let mut v = vec![*handle];
                v.extend(coords);
                v.extend(offsets(offset));
                v
            }
            ImageOp::Txq { handle, level, .. } => {
                let mut v = vec![*handle];
                v.extend(level);
                v
            }
            ImageOp::Suld { handle, coords, .. } => {
                let mut v = vec![*handle];
                v.extend(coords);
                v
            }
            ImageOp::Sust {
                handle, coords, v, ..
            } => {
                let mut r = vec![*handle];
                r.extend(coords);
                r.extend(v);
                r
            }
            ImageOp::Suq { handle, .. } | ImageOp::Istypep { handle, .. } => vec![*handle],
            ImageOp::Sured {
                handle, coords, v, ..
            } => {
                let mut r = vec![*handle, *v];
                r.extend(coords);
                r
            }
        }
    }
}

impl ImageQuery {
    /// Whether the query reads the texture object's sampler state, not its image.
    pub fn of_sampler(self) -> bool {
        matches!(
            self,
            ImageQuery::FilterMode
                | ImageQuery::AddrMode(_)
                | ImageQuery::NormalizedCoords
                | ImageQuery::ForceUnnormalizedCoords
        )
    }

    /// Whether NVIDIA's JIT compiles `txq` of this query on a texture object: on the
    /// H200 (driver 580.159.04) only width, height and depth; every other query left the
    /// function not found (ci/explore/txq_jit.c, runs/2026-12-03-h200-session14/explore/
    /// txq-lazy.txt and txq-eager.txt).
    pub fn nvidia_jit_compiles(self) -> bool {
        matches!(
            self,
            ImageQuery::Width | ImageQuery::Height | ImageQuery::Depth
        )
    }

    /// The query's name in PTX.
    pub fn name(self) -> &'static str {
        match self {
            ImageQuery::Width => "width",
            ImageQuery::Height => "height",
            ImageQuery::Depth => "depth",
            ImageQuery::ArraySize => "array_size",
            ImageQuery::MipmapLevels => "num_mipmap_levels",
            ImageQuery::FilterMode => "filter_mode",
            ImageQuery::AddrMode(0) => "addr_mode_0",
            ImageQuery::AddrMode(1) => "addr_mode_1",
            ImageQuery::AddrMode(_) => "addr_mode_2",
            ImageQuery::NormalizedCoords => "normalized_coords",
            ImageQuery::ForceUnnormalizedCoords => "force_unnormalized_coords",
            ImageQuery::ChannelDataType => "channel_data_type",
            ImageQuery::ChannelOrder => "channel_order",
            ImageQuery::NumSamples => "num_samples",
        }
    }
}

/// Which level of detail a `tex` reads, as its operands give it.
#[derive(Debug, Clone, Copy)]
pub enum LodOperand {
    /// Plain `tex` (`.base`).
    Base,
    /// `tex.level`: an f32 level of detail.
    Level(Src),
    /// `tex.grad`: the derivatives along x and y, one f32 per coordinate.
    Grad([Src; 3], [Src; 3]),
}

/// `suld`/`sust` out of the image: `.trap` faults, `.clamp` reads or writes the nearest
/// element, `.zero` reads zero and drops writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounds {
    Trap,
    Clamp,
    Zero,
}

#[derive(Debug, Clone)]
pub enum ImageOp {
    /// `tex{.level,.grad}.geom.v4.dtype.ctype d, [t, c]{, lod | , dPdx, dPdy}`:
    /// `float_coords` when ctype is f32.
    Tex {
        geom: Geom,
        d: [Dst; 4],
        dest: Dest,
        handle: Src,
        sampler: Option<SamplerRef>,
        coords: [Src; 4],
        float_coords: bool,
        lod: LodOperand,
        /// The texel offsets (`e`, one `.s32` per dimension), or None.
        offset: Option<[Src; 3]>,
        /// A depth-compare value was given (`f`): the result is the texel fetch in `x`,
        /// `y`, `z` and `w` zero (as the H200 returns it).
        depth: bool,
        /// The residency predicate (`d|p`), or `Dst::Sink`.
        resident: Dst,
    },
    /// `tld4.comp.geom.v4.dtype.f32 d{|p}, [t, c]{, e}` (2d, a2d, cube, acube).
    Tld4 {
        comp: u8,
        geom: Geom,
        d: [Dst; 4],
        handle: Src,
        sampler: Option<SamplerRef>,
        coords: [Src; 4],
        offset: Option<[Src; 3]>,
        resident: Dst,
    },
    /// `txq{.level}.query.b32 d, [t]{, lod}`: `level` names the mipmap level (s32).
    Txq {
        query: ImageQuery,
        level: Option<Src>,
        d: Dst,
        handle: Src,
    },
    /// `suld.b.geom{.v2,.v4}.btype.bounds d, [s, c]`: x in bytes.
    Suld {
        geom: Geom,
        n: u8,
        bytes: u8,
        bounds: Bounds,
        d: [Dst; 4],
        handle: Src,
        coords: [Src; 4],
    },
    /// `sust.b.geom{.v2,.v4}.btype.bounds [s, c], v`, or (`formatted`) `sust.p
    /// .geom{.v2,.v4}.b32.bounds [s, c], v`: the values (f32, u32 or s32 as the surface's
    /// channels are float, unsigned or signed) converted to the surface's format, R, G, B,
    /// A in order, one texel at x (bytes).
    Sust {
        geom: Geom,
        n: u8,
        bytes: u8,
        bounds: Bounds,
        v: [Src; 4],
        handle: Src,
        coords: [Src; 4],
        formatted: bool,
    },
    Suq {
        query: ImageQuery,
        d: Dst,
        handle: Src,
    },
    /// `istypep.{texref,samplerref,surfref} p, a`: whether the 64-bit handle `a` is an
    /// opaque variable of that kind: one of `kinds`, the handles of the module's
    /// references of that kind (texture and surface objects are none: see the executor).
    Istypep {
        p: Dst,
        handle: Src,
        kinds: Vec<u64>,
    },
    /// `sured.{b,p}.op.geom.ctype.bounds [s, c], v`: an atomic reduction of v into the
    /// element `bytes` wide at x, a byte offset (`.b`) or a sample index (`.p`).
    Sured {
        geom: Geom,
        op: SurfaceReduction,
        bytes: u8,
        form: SuredForm,
        bounds: Bounds,
        v: Src,
        handle: Src,
        coords: [Src; 4],
    },
}

/// How `sured` addresses its element and reads its data (the PTX ISA).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuredForm {
    /// `.b`: x is a byte offset, the data the instruction's type (`signed` for `.s32` and
    /// `.s64` min and max).
    Bytes { signed: bool },
    /// `.p`: x is a sample index, the `.b32`/`.b64` data unsigned or signed as the
    /// surface's format holds UINT or SINT data.
    Sample,
}

/// `sured`'s operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurfaceReduction {
    Add,
    Min,
    Max,
    And,
    Or,
}

impl FuncDecoder<'_> {
    /// `[handle, {coords}]` (or `[handle]` for the queries): the handle operand and the
    /// coordinates as written, padded with zeros.
    fn image_operand(
        &self,
        i: &InstAst,
        o: &Opnd,
        ncoords: usize,
    ) -> Result<(Src, [Src; 4]), LoadError> {
        let (name, coords) = match o {
            Opnd::Image(name, None, coords) => (name, Some(coords)),
            Opnd::Addr(Some(name), 0) if ncoords == 0 => (name, None),
            Opnd::Image(_, Some(_), _) => {
                return Err(semantic(i, "only `tex` and `tld4` take a sampler"))
            }
            _ => return Err(semantic(i, "expected `[object, {coordinates}]`")),
        };
        let handle = self.src(i, &Opnd::Name(name.clone()))?;
        let mut out = [Src::Imm(0); 4];
        if let Some(c) = coords {
            let parts: Vec<&Opnd> = match c.as_ref() {
                Opnd::Vector(v) => v.iter().collect(),
                o => vec![o],
            };
            if parts.len() != ncoords {
                return Err(semantic(
                    i,
                    format!("expected {ncoords} coordinates, found {}", parts.len()),
                ));
            }
            for (slot, p) in out.iter_mut().zip(parts) {
                *slot = self.src(i, p)?;
            }
        }
        Ok((handle, out))
    }

    /// `tex`'s and `tld4`'s `[t, {b,} c]`: the texture, its explicit sampler if named,
    /// and the coordinates. A sampler must be a module-scope `.samplerref`: a register or
    /// parameter would hold a sampler handle, and CUDA's driver makes none.
    fn tex_operand(
        &self,
        i: &InstAst,
        o: &Opnd,
        ncoords: usize,
    ) -> Result<(Src, Option<SamplerRef>, [Src; 4]), LoadError> {
        let Opnd::Image(name, Some(s), coords) = o else {
            if self.texmode_independent {
                // As ptxas: ".samplerref or .u64 register expected".
                return Err(semantic(
                    i,
                    "in independent texturing mode `tex` and `tld4` name a sampler \
                     (`[t, s, {c}]`)",
                ));
            }
            let (h, c) = self.image_operand(i, o, ncoords)?;
            return Ok((h, None, c));
        };
        let sampler = match self.samplers.get(s) {
            Some(r) => *r,
            None if matches!(self.lookup(s), Some(super::Sym::Reference(_))) => {
                return Err(semantic(
                    i,
                    format!("`{s}` is a texture or surface reference, not a `.samplerref`"),
                ))
            }
            None if self.lookup(s).is_some() => {
                return Err(unsupported(
                    i,
                    format!(
                        "unsupported sampler `{s}`: a sampler handle in a register or \
                         parameter is not emulated (CUDA's driver creates no sampler \
                         objects); name a module-scope `.global .samplerref`"
                    ),
                ))
            }
            None => return Err(semantic(i, format!("`{s}` is not a `.samplerref`"))),
        };
        let plain = Opnd::Image(name.clone(), None, coords.clone());
        let (h, c) = self.image_operand(i, &plain, ncoords)?;
        Ok((h, Some(sampler), c))
    }

    fn dests(&self, i: &InstAst, o: &Opnd, n: usize) -> Result<[Dst; 4], LoadError> {
        let parts: Vec<&Opnd> = match o {
            Opnd::Vector(v) => v.iter().collect(),
            Opnd::Pipe(..) => {
                return Err(semantic(
                    i,
                    "only `tex` and `tld4` take a residency predicate (`|p`)",
                ))
            }
            o => vec![o],
        };
        if parts.len() != n {
            return Err(semantic(i, format!("expected {n} destinations")));
        }
        let mut d = [Dst::Sink; 4];
        for (slot, p) in d.iter_mut().zip(parts) {
            *slot = self.reg(i, p)?;
        }
        Ok(d)
    }

    /// `tex`'s and `tld4`'s destinations with their optional residency predicate
    /// (`{d0, d1, d2, d3}|p`).
    fn tex_dests(&self, i: &InstAst, o: &Opnd, n: usize) -> Result<([Dst; 4], Dst), LoadError> {
        match o {
            Opnd::Pipe(v, p) => {
                let p = self.reg(i, p)?;
                if !matches!(p, Dst::Pred(_) | Dst::Sink) {
                    return Err(semantic(i, "the residency predicate (`|p`) is a predicate"));
                }
                Ok((self.dests(i, v, n)?, p))
            }
            o => Ok((self.dests(i, o, n)?, Dst::Sink)),
        }
    }

    /// The trailing operands of `tex` and `tld4` past `fixed` (texel offsets `e`, a
    /// vector; depth compare `f`, a scalar): the offsets, one `.s32` per dimension of
    /// `geom` (3d: four, the fourth ignored), and whether a depth-compare value is given.
    /// CUDA's texture objects carry no comparison function for the ISA's "if comparison
    /// passes", and the H200 ignores the value (runtime program texture_depth_compare,
    /// recorded: the texels come back whatever the reference).
    fn tex_extras(
        &self,
        i: &InstAst,
        fixed: usize,
        geom: Geom,
        full: &str,
        offset_bits: u32,
    ) -> Result<(Option<[Src; 3]>, bool), LoadError> {
        let extras = i.ops.get(fixed..).unwrap_or(&[]);
        let (offset, depth) = match extras {
            [] => (None, None),
            [e @ Opnd::Vector(_)] => (Some(e), None),
            [f] => (None, Some(f)),
            [e, f] => (Some(e), Some(f)),
            _ => return Err(semantic(i, format!("too many operands for `{full}`"))),
        };
        if let Some(f) = depth {
            // Checked as an operand, then not read.
            self.src(i, f)?;
        }
        let depth = depth.is_some();
        let Some(e) = offset else {
            return Ok((None, depth));
        };
        if geom.cube() {
            return Err(semantic(i, "cubemaps take no texel offsets (operand e)"));
        }
        let parts: Vec<&Opnd> = match e {
            Opnd::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        let want = match geom.dims() {
            1 => 1,
            2 => 2,
            _ => 4,
        };
        if parts.len() != want {
            return Err(semantic(
                i,
                format!("expected {want} texel offsets, found {}", parts.len()),
            ));
        }
        let mut out = [Src::Imm(0); 3];
        for (slot, p) in out.iter_mut().zip(parts) {
            *slot = self.src(i, p)?;
            // The field's range (tex -8..=7, tld4 -32..=31); a register's value outside
            // it is taken as its low bits, signed (`texture::texel_offset`).
            if let Src::Imm(v) = *slot {
                let half = 1i64 << (offset_bits - 1);
                if !(-half..half).contains(&(v as i64)) {
                    return Err(semantic(
                        i,
                        format!("a texel offset lies in {}..={}", -half, half - 1),
                    ));
                }
            }
        }
        Ok((Some(out), depth))
    }

    /// How many coordinate operands a geometry takes (layer first, 3D padded to 4).
    fn coord_count(geom: Geom) -> usize {
        match geom {
            Geom::D1 => 1,
            Geom::D2 | Geom::A1 => 2,
            Geom::D3 | Geom::A2 | Geom::Cube | Geom::ACube => 4,
        }
    }

    /// A vector of f32 operands (or one scalar) as up to three sources: `tex.grad`'s
    /// derivatives, `{x}`, `{x, y}` or `{x, y, z, pad}` by geometry.
    fn gradient(&self, i: &InstAst, o: &Opnd, geom: Geom) -> Result<[Src; 3], LoadError> {
        let parts: Vec<&Opnd> = match o {
            Opnd::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        let want = match geom.dims() {
            1 => 1,
            2 => 2,
            _ => 4,
        };
        if parts.len() != want {
            return Err(semantic(
                i,
                format!("expected {want} derivatives, found {}", parts.len()),
            ));
        }
        let mut out = [Src::Imm(0); 3];
        for (slot, p) in out.iter_mut().zip(parts) {
            *slot = self.src(i, p)?;
        }
        Ok(out)
    }

    pub(super) fn image(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods, why: &str| {
            unsupported(i, format!("unsupported instruction `{}`: {why}", m.full))
        };
        let op = match i.opcode.as_str() {
            "tex" => {
                m.take("base");
                let mip = m.take_any(&["level", "grad"]);
                if m.list.iter().any(|x| x == "2dms" || x == "a2dms") {
                    return Err(unsup(
                        m,
                        "multisample textures (.2dms, .a2dms) are not emulated: CUDA's \
                         runtime and driver create none (only graphics interop does)",
                    ));
                }
                let geom = if m.take("cube") {
                    Geom::Cube
                } else if m.take("acube") {
                    Geom::ACube
                } else {
                    Geom::from_mods(m).ok_or_else(|| {
                        unsup(
                            m,
                            "only 1d, 2d, 3d, a1d, a2d, cube and acube textures are emulated",
                        )
                    })?
                };
                let v2 = match m.take_any(&["v4", "v2"]).as_deref() {
                    Some("v4") => false,
                    Some(_) => true,
                    None => return Err(semantic(i, "`tex` returns a `.v4` (or `.v2.f16x2`)")),
                };
                let (dty, cty) = match m.types().as_slice() {
                    [d, c] => (*d, *c),
                    _ => return Err(semantic(i, "`tex` takes a result and a coordinate type")),
                };
                let dest = match (v2, dty) {
                    (false, Ty::F32 | Ty::S32 | Ty::U32) => Dest::Word,
                    (false, Ty::F16) => Dest::F16,
                    (true, Ty::F16x2) => Dest::F16x2,
                    _ => {
                        return Err(semantic(
                            i,
                            "`tex` results are .v4 of f32, s32, u32 or f16, or .v2.f16x2",
                        ))
                    }
                };
                if !matches!(cty, Ty::F32 | Ty::S32) {
                    return Err(semantic(i, "`tex` coordinates are f32 or s32"));
                }
                if (geom.cube() || mip.is_some()) && cty != Ty::F32 {
                    return Err(semantic(
                        i,
                        "cubemap and mipmap lookups take f32 coordinates",
                    ));
                }
                let wanted = match mip.as_deref() {
                    Some("level") => 3,
                    Some(_) => 4,
                    None => 2,
                };
                if i.ops.len() < wanted {
                    return Err(semantic(i, format!("`{}` takes {wanted} operands", m.full)));
                }
                let (offset, depth) =
                    self.tex_extras(i, wanted, geom, &m.full, crate::texture::TEX_OFFSET_BITS)?;
                let lod = match mip.as_deref() {
                    Some("level") => LodOperand::Level(self.src(i, &i.ops[2])?),
                    Some(_) => LodOperand::Grad(
                        self.gradient(i, &i.ops[2], geom)?,
                        self.gradient(i, &i.ops[3], geom)?,
                    ),
                    None => LodOperand::Base,
                };
                let n = if dest == Dest::F16x2 { 2 } else { 4 };
                let (d, resident) = self.tex_dests(i, &i.ops[0], n)?;
                let (handle, sampler, coords) =
                    self.tex_operand(i, &i.ops[1], Self::coord_count(geom))?;
                ImageOp::Tex {
                    geom,
                    d,
                    dest,
                    handle,
                    sampler,
                    coords,
                    float_coords: cty == Ty::F32,
                    lod,
                    offset,
                    depth,
                    resident,
                }
            }
            "tld4" => {
                let comp = match m.take_any(&["r", "g", "b", "a"]).as_deref() {
                    Some("r") => 0,
                    Some("g") => 1,
                    Some("b") => 2,
                    Some("a") => 3,
                    _ => return Err(semantic(i, "`tld4` names a component (.r .g .b .a)")),
                };
                let geom = match m.take_any(&["2d", "a2d", "cube", "acube"]).as_deref() {
                    Some("2d") => Geom::D2,
                    Some("a2d") => Geom::A2,
                    Some("cube") => Geom::Cube,
                    Some("acube") => Geom::ACube,
                    _ => return Err(unsup(m, "gathers are 2d, a2d, cube or acube")),
                };
                if !m.take("v4") {
                    return Err(semantic(i, "`tld4` returns a `.v4`"));
                }
                match m.types().as_slice() {
                    [Ty::F32 | Ty::S32 | Ty::U32, Ty::F32] => {}
                    _ => return Err(unsup(m, "results f32, s32 or u32 of f32 coordinates")),
                }
                if i.ops.len() < 2 {
                    return Err(semantic(i, "`tld4` takes a result and `[t, c]`"));
                }
                // A depth-compare value is ignored, as on the H200 (tex_extras).
                let (offset, _depth) =
                    self.tex_extras(i, 2, geom, &m.full, crate::texture::TLD4_OFFSET_BITS)?;
                let (d, resident) = self.tex_dests(i, &i.ops[0], 4)?;
                let n = match geom {
                    Geom::D2 => 2,
                    _ => 4,
                };
                let (handle, sampler, coords) = self.tex_operand(i, &i.ops[1], n)?;
                ImageOp::Tld4 {
                    comp,
                    geom,
                    d,
                    handle,
                    sampler,
                    coords,
                    offset,
                    resident,
                }
            }
            "istypep" => {
                let Some(kind) = m.take_any(&["texref", "samplerref", "surfref"]) else {
                    return Err(semantic(
                        i,
                        "`istypep` takes .texref, .samplerref or .surfref",
                    ));
                };
                // The handles of the module's references of that kind (a `.samplerref`
                // has no handle here: `tex` names it).
                let kinds = self
                    .references
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| match kind.as_str() {
                        "texref" => !r.surface,
                        "surfref" => r.surface,
                        _ => false,
                    })
                    .map(|(k, _)| crate::Reference::handle(k))
                    .collect();
                self.nops(i, 2)?;
                let p = self.reg(i, &i.ops[0])?;
                if !matches!(p, Dst::Pred(_) | Dst::Sink) {
                    return Err(semantic(i, "`istypep`'s result is a predicate"));
                }
                let handle = self.src(i, &i.ops[1])?;
                ImageOp::Istypep { p, handle, kinds }
            }
            "txq" | "suq" => {
                // `txq.level.{width,height,depth}.b32 d, [t], lod`: a mipmap level's size.
                let level = i.opcode == "txq" && m.take("level");
                if level
                    && !m
                        .list
                        .iter()
                        .any(|x| matches!(x.as_str(), "width" | "height" | "depth"))
                {
                    return Err(unsup(m, "txq.level queries width, height or depth"));
                }
                let query =
                    match m
                        .take_any(&[
                            "width",
                            "height",
                            "depth",
                            "array_size",
                            "num_mipmap_levels",
                            "filter_mode",
                            "addr_mode_0",
                            "addr_mode_1",
                            "addr_mode_2",
                            "normalized_coords",
                            "force_unnormalized_coords",
                            "channel_data_type",
                            "channel_order",
                            "num_samples",
                        ])
                        .as_deref()
                    {
                        Some("width") => ImageQuery::Width,
                        Some("height") => ImageQuery::Height,
                        Some("depth") => ImageQuery::Depth,
                        Some("array_size") => ImageQuery::ArraySize,
                        Some(q) if i.opcode == "txq" && !level => match q {
                            "num_mipmap_levels" => ImageQuery::MipmapLevels,
                            "filter_mode" => ImageQuery::FilterMode,
                            "addr_mode_0" => ImageQuery::AddrMode(0),
                            "addr_mode_1" => ImageQuery::AddrMode(1),
                            "addr_mode_2" => ImageQuery::AddrMode(2),
                            "normalized_coords" => ImageQuery::NormalizedCoords,
                            "channel_data_type" => ImageQuery::ChannelDataType,
                            "channel_order" => ImageQuery::ChannelOrder,
                            "num_samples" => ImageQuery::NumSamples,
                            _ => ImageQuery::ForceUnnormalizedCoords,
                        },
                        _ => return Err(unsup(
                            m,
                            "only width, height, depth, array_size, level.{width,height,depth} \
                             and (txq) num_mipmap_levels, normalized_coords, the sampler and \
                             the format queries are decoded; suq's memory_layout and channel \
                             queries the H200's driver refuses at load too \
                             (CUDA_ERROR_NOT_SUPPORTED, probe image_queries)",
                        )),
                    };
                if query.of_sampler() && self.texmode_independent {
                    // The ISA: in independent mode a sampler's attributes are queried
                    // through its `.samplerref`, whose handles CUDA's driver never makes.
                    return Err(unsup(
                        m,
                        "txq's sampler queries in independent texturing mode (of a \
                         `.samplerref`)",
                    ));
                }
                if level
                    && !matches!(
                        query,
                        ImageQuery::Width | ImageQuery::Height | ImageQuery::Depth
                    )
                {
                    return Err(semantic(i, "txq.level queries width, height or depth"));
                }
                // ptxas 13.0 on the H200 (probe image_queries): `txq.force_unnormalized_coords`
                // of a named `.texref` is INVALID_PTX (".samplerref expected"); `suq.array_size`
                // is refused at load (CUDA_ERROR_NOT_SUPPORTED), of a `.surfref` and of a
                // surface object alike.
                let names_texref = matches!(&i.ops[1], Opnd::Addr(Some(n), 0) | Opnd::Image(n, None, _)
                    if self.references.iter().any(|r| !r.surface && r.name == *n));
                if query == ImageQuery::ForceUnnormalizedCoords && names_texref {
                    return Err(semantic(
                        i,
                        "txq.force_unnormalized_coords takes a .samplerref, not a .texref \
                         (as ptxas says)",
                    ));
                }
                if i.opcode == "suq" && query == ImageQuery::ArraySize {
                    return Err(unsup(
                        m,
                        "suq.array_size: the H200's driver refuses it at load too \
                         (CUDA_ERROR_NOT_SUPPORTED); a layered surface's layers are its \
                         suq.depth",
                    ));
                }
                if m.types().as_slice() != [Ty::B32] {
                    return Err(semantic(i, "a query's result is `.b32`"));
                }
                self.nops(i, if level { 3 } else { 2 })?;
                let d = self.reg(i, &i.ops[0])?;
                let (handle, _) = self.image_operand(i, &i.ops[1], 0)?;
                if i.opcode == "txq" && !level && !query.nvidia_jit_compiles() {
                    // The function (and a kernel reaching it) gets no code from NVIDIA's
                    // JIT; the driver decides what that means for a load.
                    self.nvidia_jit_refuses.get_or_insert_with(|| {
                        format!(
                            "line {}: `{}`: NVIDIA's JIT compiles txq on a texture object \
                             for width, height and depth only (the H200's driver \
                             580.159.04 finds no function that asks {})",
                            i.line,
                            m.full,
                            query.name()
                        )
                    });
                }
                if i.opcode == "txq" {
                    let level = if level {
                        Some(self.src(i, &i.ops[2])?)
                    } else {
                        None
                    };
                    ImageOp::Txq {
                        query,
                        level,
                        d,
                        handle,
                    }
                } else {
                    ImageOp::Suq { query, d, handle }
                }
            }
            "suld" | "sust" => {
                let store = i.opcode == "sust";
                let formatted = store && m.take("p");
                if !formatted && !m.take("b") {
                    return Err(semantic(
                        i,
                        if store {
                            "expected `.b` or `.p`"
                        } else {
                            "expected `.b`"
                        },
                    ));
                }
                m.drop_hints();
                let geom = Geom::from_mods(m)
                    .ok_or_else(|| unsup(m, "only 1d, 2d, 3d, a1d and a2d surfaces"))?;
                let n = match m.take_any(&["v2", "v4"]).as_deref() {
                    Some("v2") => 2,
                    Some("v4") => 4,
                    _ => 1,
                };
                let bytes = match m.types().as_slice() {
                    [Ty::B8] => 1,
                    [Ty::B16] => 2,
                    [Ty::B32] => 4,
                    [Ty::B64] => 8,
                    _ => return Err(semantic(i, "expected one of .b8 .b16 .b32 .b64")),
                };
                if formatted && bytes != 4 {
                    return Err(semantic(i, "`sust.p` stores `.b32` values"));
                }
                let bounds = match m.take_any(&["trap", "clamp", "zero"]).as_deref() {
                    Some("clamp") => Bounds::Clamp,
                    Some("zero") => Bounds::Zero,
                    _ => Bounds::Trap,
                };
                self.nops(i, 2)?;
                let (img, val) = if store {
                    (&i.ops[0], &i.ops[1])
                } else {
                    (&i.ops[1], &i.ops[0])
                };
                let (handle, coords) = self.image_operand(i, img, Self::coord_count(geom))?;
                if store {
                    let parts: Vec<&Opnd> = match val {
                        Opnd::Vector(v) => v.iter().collect(),
                        o => vec![o],
                    };
                    if parts.len() != n {
                        return Err(semantic(i, format!("expected {n} values")));
                    }
                    let mut v = [Src::Imm(0); 4];
                    for (slot, p) in v.iter_mut().zip(parts) {
                        *slot = self.src(i, p)?;
                    }
                    ImageOp::Sust {
                        geom,
                        n: n as u8,
                        bytes,
                        bounds,
                        v,
                        handle,
                        coords,
                        formatted,
                    }
                } else {
                    ImageOp::Suld {
                        geom,
                        n: n as u8,
                        bytes,
                        bounds,
                        d: self.dests(i, val, n)?,
                        handle,
                        coords,
                    }
                }
            }
            "sured" => {
                let by_sample = m.take("p");
                if !by_sample && !m.take("b") {
                    return Err(semantic(i, "expected `.b` or `.p`"));
                }
                let op = match m.take_any(&["add", "min", "max", "and", "or"]).as_deref() {
                    Some("add") => SurfaceReduction::Add,
                    Some("min") => SurfaceReduction::Min,
                    Some("max") => SurfaceReduction::Max,
                    Some("and") => SurfaceReduction::And,
                    Some("or") => SurfaceReduction::Or,
                    _ => return Err(semantic(i, "expected .add, .min, .max, .and or .or")),
                };
                let geom = match Geom::from_mods(m) {
                    Some(g @ (Geom::D1 | Geom::D2 | Geom::D3)) => g,
                    _ => return Err(semantic(i, "`sured` takes 1d, 2d or 3d surfaces")),
                };
                // The ISA's types per operation: `.b` add u32, u64, s32; min and max
                // u32, s32, u64, s64; and and or b32. `.p` any of them b32, and b64 for
                // min and max only (its signedness is the surface format's).
                let ty = m.types();
                let (bytes, form) = if by_sample {
                    match (op, ty.as_slice()) {
                        (_, [Ty::B32]) => (4, SuredForm::Sample),
                        (SurfaceReduction::Min | SurfaceReduction::Max, [Ty::B64]) => {
                            (8, SuredForm::Sample)
                        }
                        _ => {
                            return Err(semantic(
                                i,
                                "`sured.p` takes .b32, or .b64 for .min and .max",
                            ))
                        }
                    }
                } else {
                    let (bytes, signed) = sured_b_type(i, op, &ty)?;
                    (bytes, SuredForm::Bytes { signed })
                };
                let bounds = match m.take_any(&["trap", "clamp", "zero"]).as_deref() {
                    Some("clamp") => Bounds::Clamp,
                    Some("zero") => Bounds::Zero,
                    _ => Bounds::Trap,
                };
                self.nops(i, 2)?;
                let (handle, coords) = self.image_operand(i, &i.ops[0], Self::coord_count(geom))?;
                let v = self.src(i, &i.ops[1])?;
                ImageOp::Sured {
                    geom,
                    op,
                    bytes,
                    form,
                    bounds,
                    v,
                    handle,
                    coords,
                }
            }
            _ => return Err(unsup(m, "not a texture or surface instruction")),
        };
        Ok(Op::Image(Box::new(op)))
    }
}

/// `sured.b`'s element width and signedness: the ISA's types per operation.
fn sured_b_type(i: &InstAst, op: SurfaceReduction, ty: &[Ty]) -> Result<(u8, bool), LoadError> {
    Ok(match (op, ty) {
        (SurfaceReduction::Add, [Ty::U32 | Ty::S32]) => (4, false),
        (SurfaceReduction::Add, [Ty::U64]) => (8, false),
        (SurfaceReduction::Min | SurfaceReduction::Max, [Ty::U32]) => (4, false),
        (SurfaceReduction::Min | SurfaceReduction::Max, [Ty::S32]) => (4, true),
        (SurfaceReduction::Min | SurfaceReduction::Max, [Ty::U64]) => (8, false),
        (SurfaceReduction::Min | SurfaceReduction::Max, [Ty::S64]) => (8, true),
        (SurfaceReduction::And | SurfaceReduction::Or, [Ty::B32]) => (4, false),
        _ => {
            return Err(semantic(
                i,
                "a type `sured.b` does not take for this operation",
            ))
        }
    })
}
