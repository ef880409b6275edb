//! Texture and surface instructions over a warp: each active lane's object handle looked
//! up through [`crate::Memory`] (once per distinct handle in the warp), its coordinates
//! read, and the sample (`crate::texture`) or surface element written back (or reduced into).

use std::sync::Arc;

use super::{for_lanes, write_lane, BlockCtx, Fault, Warp};
use crate::decode::{
    Bounds, Dest, Geom, ImageOp, ImageQuery, LodOperand, SamplerRef, Src, SuredForm,
    SurfaceReduction,
};
use crate::math::{f64_to_f16, Lanes, Rnd};
use crate::texture::{
    texel_offset, ChannelKind, Image, Lod, Lookup, SurfaceObject, TextureObject, TEX_OFFSET_BITS,
    TLD4_OFFSET_BITS,
};
use crate::FaultKind;

/// The objects a warp's lanes name, looked up once each: a warp usually names one, kept
/// apart so that looking it up allocates nothing.
struct Handles<T> {
    first: Option<(u64, Arc<T>)>,
    rest: Vec<(u64, Arc<T>)>,
}

impl<T> Handles<T> {
    fn new() -> Handles<T> {
        Handles {
            first: None,
            rest: Vec::new(),
        }
    }

    /// The object, borrowed: cloning its `Arc` for each lane would bump a count that the
    /// other host threads' warps bump too, a cache line bounced between cores per fetch.
    fn get(&mut self, handle: u64, look: impl Fn(u64) -> Option<Arc<T>>) -> Option<&T> {
        match &self.first {
            Some((h, _)) if *h == handle => {}
            None => self.first = Some((handle, look(handle)?)),
            Some(_) => {
                let at = match self.rest.iter().position(|(h, _)| *h == handle) {
                    Some(at) => at,
                    None => {
                        self.rest.push((handle, look(handle)?));
                        self.rest.len() - 1
                    }
                };
                return Some(&self.rest[at].1);
            }
        }
        self.first.as_ref().map(|(_, t)| &**t)
    }
}

impl BlockCtx<'_> {
    fn lanes(&self, w: &Warp, s: Src) -> Lanes {
        let mut v = [0u64; 32];
        self.fetch(w, s, &mut v);
        v
    }

    /// The coordinates' lanes (operands past those written are immediate zeros).
    fn coord_lanes(&self, w: &Warp, coords: &[Src; 4]) -> [Lanes; 4] {
        let mut c = [[0u64; 32]; 4];
        for (v, s) in c.iter_mut().zip(coords) {
            self.fetch(w, *s, v);
        }
        c
    }

    /// Each lane's texel offsets (`texture::texel_offset`, fields `bits` wide), zeros
    /// without the operand.
    fn offset_lanes(&self, w: &Warp, offset: &Option<[Src; 3]>, bits: u32) -> [[i64; 3]; 32] {
        let mut out = [[0i64; 3]; 32];
        if let Some(e) = offset {
            for (k, s) in e.iter().enumerate() {
                let v = self.lanes(w, *s);
                for (l, o) in out.iter_mut().enumerate() {
                    o[k] = texel_offset(v[l], bits);
                }
            }
        }
        out
    }

    /// Runs `body` for the lanes of `emask` in turn, each with the object its handle
    /// names (`look`, once per distinct handle), and stops at the first lane that faults:
    /// on a handle `look` does not know (an illegal address) or with the body's own fault.
    fn each_lane<T: ImageObject>(
        &self,
        w: &Warp,
        pc: u32,
        emask: u32,
        handles: &Lanes,
        look: impl Fn(u64) -> Option<Arc<T>>,
        mut body: impl FnMut(usize, &T) -> Result<(), LaneFault>,
    ) -> Result<(), Fault> {
        let mut objects = Handles::<T>::new();
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let h = handles[l];
            let r = match objects.get(h, &look) {
                Some(t) => body(l, t),
                None => Err(LaneFault {
                    kind: FaultKind::IllegalAddress,
                    detail: match crate::reference_index(h) {
                        Some(i) => format!(
                            "{h:#x} is the module's reference {i}, which had no {} bound at \
                             the launch",
                            T::KIND
                        ),
                        None => format!("{h:#x} is not a {} object of this context", T::KIND),
                    },
                }),
            };
            if let Err(f) = r {
                return Err(self.fault(w, l as u32, pc, f.kind, None, f.detail));
            }
        }
        Ok(())
    }

    pub(crate) fn image(
        &mut self,
        w: &mut Warp,
        op: &ImageOp,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mem = self.mem;
        let texmem = &crate::texture::Texmem::new(mem);
        match op {
            ImageOp::Tex {
                geom,
                d,
                dest,
                handle,
                sampler,
                coords,
                float_coords,
                lod,
                offset,
                depth,
                resident,
            } => {
                let h = self.lanes(w, *handle);
                let c = self.coord_lanes(w, coords);
                let off = self.offset_lanes(w, offset, TEX_OFFSET_BITS);
                // The level of detail, or the derivatives along x (0..3) and y (3..6).
                let mut lod_lanes = [[0u64; 32]; 6];
                match lod {
                    LodOperand::Base => {}
                    LodOperand::Level(s) => self.fetch(w, *s, &mut lod_lanes[0]),
                    LodOperand::Grad(dx, dy) => {
                        for (v, s) in lod_lanes.iter_mut().zip(dx.iter().chain(dy)) {
                            self.fetch(w, *s, v);
                        }
                    }
                }
                let f = |v: u64| f32::from_bits(v as u32);
                let mut results = [[0u32; 4]; 32];
                let look = |x| with_sampler(mem.texture(x), sampler);
                self.each_lane(w, pc, emask, &h, look, |l, t: &TextureObject| {
                    if *dest != Dest::Word && !t.reads_float() {
                        return Err(LaneFault {
                            kind: FaultKind::IllegalInstruction,
                            detail: "tex with an f16 result over a texture that reads integers \
                                     (CU_TRSF_READ_AS_INTEGER or 32-bit integer channels): the \
                                     ISA leaves the conversion open, not emulated"
                                .into(),
                        });
                    }
                    let (layer, first) = layer_of(*geom, &c, l);
                    let v = if *float_coords {
                        let mut xyz = [0f32; 3];
                        for (k, v) in xyz.iter_mut().enumerate().take(geom.dims()) {
                            *v = f32::from_bits(c[first + k][l] as u32);
                        }
                        let lod = match lod {
                            LodOperand::Base => Lod::Base,
                            LodOperand::Level(_) => Lod::Level(f(lod_lanes[0][l])),
                            LodOperand::Grad(..) => Lod::Grad(
                                std::array::from_fn(|k| f(lod_lanes[k][l])),
                                std::array::from_fn(|k| f(lod_lanes[3 + k][l])),
                            ),
                        };
                        t.sample(
                            texmem,
                            &Lookup {
                                dims: geom.dims(),
                                coords: xyz,
                                offset: off[l],
                                layer,
                                cube: geom.cube(),
                                lod,
                            },
                        )?
                    } else {
                        let mut at = [0i64; 3];
                        for (k, v) in at.iter_mut().enumerate().take(geom.dims()) {
                            *v = c[first + k][l] as u32 as i32 as i64;
                        }
                        t.fetch(texmem, geom.dims(), at, off[l], layer)?
                    };
                    // Depth compare: the fetch in x, the rest zero (as recorded).
                    let v = if *depth { [v[0], 0, 0, 0] } else { v };
                    results[l] = half_dest(*dest, v);
                    Ok(())
                })?;
                let n = if *dest == Dest::F16x2 { 2 } else { 4 };
                write_results(w, d, n, &results, emask);
                write_resident(w, *resident, emask);
            }
            ImageOp::Tld4 {
                comp,
                geom,
                d,
                handle,
                sampler,
                coords,
                offset,
                resident,
            } => {
                let h = self.lanes(w, *handle);
                let c = self.coord_lanes(w, coords);
                let off = self.offset_lanes(w, offset, TLD4_OFFSET_BITS);
                let mut results = [[0u32; 4]; 32];
                let look = |x| with_sampler(mem.texture(x), sampler);
                self.each_lane(w, pc, emask, &h, look, |l, t: &TextureObject| {
                    let (layer, first) = layer_of(*geom, &c, l);
                    let q = Lookup {
                        offset: off[l],
                        dims: 2,
                        coords: std::array::from_fn(|k| f32::from_bits(c[first + k][l] as u32)),
                        layer,
                        cube: geom.cube(),
                        lod: Lod::Base,
                    };
                    results[l] = t.gather(texmem, &q, *comp as usize)?;
                    Ok(())
                })?;
                write_results(w, d, 4, &results, emask);
                write_resident(w, *resident, emask);
            }
            ImageOp::Txq {
                query,
                d,
                handle,
                level,
            } if level.is_some() || *query == ImageQuery::MipmapLevels => {
                let h = self.lanes(w, *handle);
                let lod = level.map(|s| self.lanes(w, s));
                let mut results = [[0u32; 4]; 32];
                let look = |x| mem.texture(x);
                self.each_lane(w, pc, emask, &h, look, |l, t: &TextureObject| {
                    results[l][0] = match (query, &lod) {
                        (ImageQuery::MipmapLevels, _) => t.level_count() as u32,
                        (q, Some(lod)) => {
                            let k = match q {
                                ImageQuery::Width => 0,
                                ImageQuery::Height => 1,
                                _ => 2,
                            };
                            let size = t.level_size(lod[l] as u32 as i32 as i64, k);
                            match (k, &t.image) {
                                (2, img) if img.layered || img.cubemap => 1,
                                _ => size as u32,
                            }
                        }
                        _ => 0,
                    };
                    Ok(())
                })?;
                write_results(w, &[*d; 4], 1, &results, emask);
            }
            ImageOp::Txq { query, .. }
                if matches!(
                    query,
                    ImageQuery::ChannelDataType | ImageQuery::ChannelOrder | ImageQuery::NumSamples
                ) =>
            {
                let lane = emask.trailing_zeros();
                return Err(self.fault(
                    w,
                    lane,
                    pc,
                    FaultKind::IllegalInstruction,
                    None,
                    format!(
                        "txq.{}: its values are not emulated (the ISA leaves them to the \
                         source language's API, and NVIDIA's JIT compiles no code for a \
                         kernel that asks them)",
                        query.name()
                    ),
                ));
            }
            ImageOp::Txq {
                query, d, handle, ..
            } if query.of_sampler() => {
                let h = self.lanes(w, *handle);
                let mut results = [[0u32; 4]; 32];
                let look = |x| mem.texture(x);
                self.each_lane(w, pc, emask, &h, look, |l, t: &TextureObject| {
                    results[l][0] = sampler_value(&t.sampler, *query);
                    Ok(())
                })?;
                write_results(w, &[*d; 4], 1, &results, emask);
            }
            ImageOp::Txq {
                query, d, handle, ..
            }
            | ImageOp::Suq { query, d, handle } => {
                let h = self.lanes(w, *handle);
                let mut results = [[0u32; 4]; 32];
                let surface = matches!(op, ImageOp::Suq { .. });
                let mut answer = |l: usize, img: &Image| -> Result<(), LaneFault> {
                    results[l][0] = query_value(img, *query, surface);
                    Ok(())
                };
                if surface {
                    let look = |x| mem.surface(x);
                    self.each_lane(w, pc, emask, &h, look, |l, s: &SurfaceObject| {
                        answer(l, &s.image)
                    })?;
                } else {
                    let look = |x| mem.texture(x);
                    self.each_lane(w, pc, emask, &h, look, |l, t: &TextureObject| {
                        answer(l, &t.image)
                    })?;
                }
                write_results(w, &[*d; 4], 1, &results, emask);
            }
            ImageOp::Istypep { p, handle, kinds } => {
                // The ISA: true when `a` points to an opaque variable of the kind. The
                // H200 answers false for texture objects, surface objects, 0 and device
                // pointers alike, for each kind (ci/explore/istypep.c, runs/
                // 2026-12-03-h200-session15): unified mode's object handles are not
                // `.texref` or `.surfref` variables. A module reference's handle is one
                // (the ISA's rule; not recorded on the H200).
                let h = self.lanes(w, *handle);
                for_lanes(emask, |l| {
                    write_lane(w, *p, l, u64::from(kinds.contains(&h[l])))
                });
            }
            ImageOp::Sured {
                geom,
                op: rop,
                bytes,
                form,
                bounds,
                v,
                handle,
                coords,
            } => {
                let h = self.lanes(w, *handle);
                let c = self.coord_lanes(w, coords);
                let vals = self.lanes(w, *v);
                let look = |x| mem.surface(x);
                self.each_lane(w, pc, emask, &h, look, |l, s: &SurfaceObject| {
                    let img = &s.image;
                    let access = *bytes as u64;
                    let (x_unit, signed) = match form {
                        SuredForm::Bytes { signed } => (1, *signed),
                        SuredForm::Sample => sample_data(img, access),
                    };
                    // `.zero` out of bounds: the reduction is dropped.
                    if let Some(at) = element_offset(img, *geom, &c, l, access, *bounds, x_unit)? {
                        reduce(img, texmem, at, *rop, *bytes, signed, vals[l])?;
                    }
                    Ok(())
                })?;
            }
            ImageOp::Suld {
                geom,
                n,
                bytes,
                bounds,
                d,
                handle,
                coords,
            } => {
                let h = self.lanes(w, *handle);
                let c = self.coord_lanes(w, coords);
                let access = *n as u64 * *bytes as u64;
                let mut results = [[0u64; 4]; 32];
                let look = |x| mem.surface(x);
                self.each_lane(w, pc, emask, &h, look, |l, s: &SurfaceObject| {
                    let Some(at) = element_offset(&s.image, *geom, &c, l, access, *bounds, 1)?
                    else {
                        return Ok(()); // `.zero`: reads zero.
                    };
                    let mut buf = [0u8; 32];
                    s.image.read(texmem, at, &mut buf[..access as usize])?;
                    for k in 0..*n as usize {
                        let mut v = 0u64;
                        for b in 0..*bytes as usize {
                            v |= (buf[k * *bytes as usize + b] as u64) << (8 * b);
                        }
                        results[l][k] = v;
                    }
                    Ok(())
                })?;
                for_lanes(emask, |l| {
                    for k in 0..*n as usize {
                        write_lane(w, d[k], l, results[l][k]);
                    }
                });
            }
            ImageOp::Sust {
                geom,
                n,
                bytes,
                bounds,
                v,
                handle,
                coords,
                formatted,
            } => {
                let h = self.lanes(w, *handle);
                let c = self.coord_lanes(w, coords);
                let vals = self.coord_lanes(w, v);
                let vals = &vals[..*n as usize];
                let look = |x| mem.surface(x);
                self.each_lane(w, pc, emask, &h, look, |l, s: &SurfaceObject| {
                    // A formatted store writes one texel; an unformatted one its bytes.
                    let (access, x_unit) = if *formatted {
                        let sample = s.image.format.texel_bytes();
                        (sample, sample)
                    } else {
                        (*n as u64 * *bytes as u64, 1)
                    };
                    let Some(at) = element_offset(&s.image, *geom, &c, l, access, *bounds, x_unit)?
                    else {
                        return Ok(()); // `.zero`: the store is dropped.
                    };
                    let mut buf = [0u8; 32];
                    if *formatted {
                        // Channels the values do not reach are written as zero (the ISA:
                        // "an unpredictable value"; the H200's, recorded).
                        let f = s.image.format;
                        let mut values = [0u32; 4];
                        for (x, v) in values.iter_mut().zip(vals) {
                            *x = v[l] as u32;
                        }
                        encode_texel(f, &values[..vals.len()], &mut buf);
                    } else {
                        for (k, lanes) in vals.iter().enumerate() {
                            for b in 0..*bytes as usize {
                                buf[k * *bytes as usize + b] = (lanes[l] >> (8 * b)) as u8;
                            }
                        }
                    }
                    s.image.write(texmem, at, &buf[..access as usize])?;
                    Ok(())
                })?;
            }
        }
        Ok(())
    }
}

/// Why one lane's image instruction faults.
struct LaneFault {
    kind: FaultKind,
    detail: String,
}

/// The texture memory's answers (a read or write out of the object's storage, a surface
/// access out of bounds) are illegal addresses.
impl From<String> for LaneFault {
    fn from(detail: String) -> LaneFault {
        LaneFault {
            kind: FaultKind::IllegalAddress,
            detail,
        }
    }
}

/// An object a lane's handle names, by the kind a fault message says it is not.
trait ImageObject {
    const KIND: &'static str;
}

impl ImageObject for TextureObject {
    const KIND: &'static str = "texture";
}

impl ImageObject for SurfaceObject {
    const KIND: &'static str = "surface";
}

/// Lane `l`'s layer and the index of its first coordinate: layered geometries put the
/// (integer) layer first.
fn layer_of(geom: Geom, c: &[Lanes; 4], l: usize) -> (Option<i64>, usize) {
    if geom.layered() {
        (Some(c[0][l] as u32 as i32 as i64), 1)
    } else {
        (None, 0)
    }
}

/// `sust.p`'s conversion (PTX ISA: the values are f32 for float channels, u32 for
/// unsigned, s32 for signed, "converted from this type to the surface sample format"):
/// the first `channels` values, R first, into `buf`. As the H200 converts them (runtime
/// program surface_formatted, recorded): f32 to f16 toward zero (65520 stores 65504,
/// 1 + 2^-11 stores 1, 5.96e-8 stores 0), a NaN keeping its sign and its payload's top
/// bits; integers wider than a channel saturate to its range.
fn encode_texel(f: crate::texture::Format, values: &[u32], buf: &mut [u8]) {
    use crate::texture::ChannelKind;
    let w = f.bits as usize / 8;
    for (c, v) in values.iter().enumerate().take(f.channels as usize) {
        let raw: u64 = match (f.kind, f.bits) {
            (ChannelKind::Float, 16) if f32::from_bits(*v).is_nan() => {
                let top = ((v & 0x007f_ffff) >> 13).max(1);
                u64::from((v >> 16) & 0x8000 | 0x7c00 | top)
            }
            (ChannelKind::Float, 16) => {
                crate::math::f64_to_f16(f32::from_bits(*v) as f64, crate::math::Rnd::Z) as u64
            }
            (ChannelKind::Float, _) => *v as u64,
            (ChannelKind::Unsigned, b) if b < 32 => (*v as u64).min((1 << b) - 1),
            (ChannelKind::Unsigned, _) => *v as u64,
            (ChannelKind::Signed, b) if b < 32 => {
                let max = (1i64 << (b - 1)) - 1;
                (*v as i32 as i64).clamp(-max - 1, max) as u64
            }
            (ChannelKind::Signed, _) => *v as u64,
        };
        for k in 0..w {
            buf[c * w + k] = (raw >> (8 * k)) as u8;
        }
    }
}

/// `sured.p`'s addressing unit and whether its data is signed, as the H200 ran it
/// (ci/explore/sured_p.cu, 385 cases over ten formats, runs/2026-12-03-h200-session18/call3):
/// x counts units of the data's own size (4 bytes for `.b32`, 8 for `.b64`), whatever the
/// format's texel (x 1 of a u32x4 surface is its byte 4, of a u32x1 one under `.b64` its
/// byte 8), bounded by the row's bytes, so that a `.b64` spans two 4-byte texels and a
/// `.b32` one channel of a wider texel; the data is signed where the format's channels are
/// SINT, unsigned otherwise (floats and normalized formats too), whatever the channel
/// width (s8x4 reads as s32/s64).
fn sample_data(img: &Image, access: u64) -> (u64, bool) {
    (access, img.format.kind == ChannelKind::Signed)
}

/// What makes `sured` atomic: the host threads running blocks take the lock of the
/// element's stripe around its read, operation and write. Atomic against other `sured`s
/// of the element (as the ISA's reduction is); a plain `sust` or a global `atom` on the
/// same bytes does not take it.
static SURFACE_REDUCTION_LOCKS: [std::sync::Mutex<()>; 64] =
    [const { std::sync::Mutex::new(()) }; 64];

/// `sured.b`: the element of `bytes` at `offset` of `img` combined with `v` by `op`
/// (min and max `signed` or not; add wraps), under its stripe's lock.
fn reduce(
    img: &Image,
    mem: &crate::texture::Texmem<'_>,
    offset: u64,
    op: SurfaceReduction,
    bytes: u8,
    signed: bool,
    v: u64,
) -> Result<(), String> {
    // The element's identity: the CUDA array's bytes or the device address.
    let key = match &img.storage {
        crate::texture::Storage::Array(t) => (Arc::as_ptr(t) as u64).wrapping_add(offset),
        crate::texture::Storage::Device(base) => base.wrapping_add(offset),
        crate::texture::Storage::View { texels, origin, .. } => (Arc::as_ptr(texels) as u64)
            .wrapping_add(*origin)
            .wrapping_add(offset),
    };
    let stripe = (key / 8) as usize % SURFACE_REDUCTION_LOCKS.len();
    let _held = SURFACE_REDUCTION_LOCKS[stripe]
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let n = bytes as usize;
    let mut buf = [0u8; 8];
    img.read(mem, offset, &mut buf[..n])?;
    let old = u64::from_le_bytes(buf);
    let new = if n == 4 {
        let (a, b) = (old as u32, v as u32);
        (match op {
            SurfaceReduction::Add => a.wrapping_add(b),
            SurfaceReduction::Min if signed => (a as i32).min(b as i32) as u32,
            SurfaceReduction::Max if signed => (a as i32).max(b as i32) as u32,
            SurfaceReduction::Min => a.min(b),
            SurfaceReduction::Max => a.max(b),
            SurfaceReduction::And => a & b,
            SurfaceReduction::Or => a | b,
        }) as u64
    } else {
        match op {
            SurfaceReduction::Add => old.wrapping_add(v),
            SurfaceReduction::Min if signed => (old as i64).min(v as i64) as u64,
            SurfaceReduction::Max if signed => (old as i64).max(v as i64) as u64,
            SurfaceReduction::Min => old.min(v),
            SurfaceReduction::Max => old.max(v),
            SurfaceReduction::And => old & v,
            SurfaceReduction::Or => old | v,
        }
    };
    img.write(mem, offset, &new.to_le_bytes()[..n])
}

/// A texture object as an explicit sampler has it sample (`TextureObject::with_sampler`):
/// a copy made once per handle a warp instruction names.
fn with_sampler(
    t: Option<Arc<TextureObject>>,
    s: &Option<SamplerRef>,
) -> Option<Arc<TextureObject>> {
    match s {
        Some(s) => t.map(|t| Arc::new(t.with_sampler(s))),
        None => t,
    }
}

/// `tex`'s four f32 results as its destination type has them: unchanged (`.v4.f32`, and
/// integers), four f16s (`.v4.f16`) or two f16 pairs, x and z in the low halves
/// (`.v2.f16x2`). Each f32 is rounded to the nearest f16, ties to even: the ISA does not
/// say how. The H200 agrees on point samples and finite blends (runtime program
/// texture_forms, recorded); where a linear sample blends a NaN or an infinity it returns
/// other bits, not fitted (declared in clients/runtime/goldens/differences.txt).
fn half_dest(dest: Dest, v: [u32; 4]) -> [u32; 4] {
    if dest == Dest::Word {
        return v;
    }
    let h = v.map(|x| f64_to_f16(f32::from_bits(x) as f64, Rnd::N) as u32);
    match dest {
        Dest::F16x2 => [h[0] | h[1] << 16, h[2] | h[3] << 16, 0, 0],
        _ => h,
    }
}

fn write_results(
    w: &mut Warp,
    d: &[crate::decode::Dst; 4],
    n: usize,
    r: &[[u32; 4]; 32],
    emask: u32,
) {
    for_lanes(emask, |l| {
        for k in 0..n {
            write_lane(w, d[k], l, r[l][k] as u64);
        }
    });
}

/// The residency predicate (`d|p`) of `tex` and `tld4`: the mock has no sparse textures
/// (the driver creates none), so every texel is resident and p is true, as the ISA says
/// of resident data.
fn write_resident(w: &mut Warp, p: crate::decode::Dst, emask: u32) {
    for_lanes(emask, |l| write_lane(w, p, l, 1));
}

/// `txq` (`surface` false) and `suq` of an extent or an array size. The H200
/// (probe image_queries, runs/2026-12-03-h200-session18/call5; texture and surface
/// objects and references alike) reports the extent the resource was made with: depth 0
/// but for 3D arrays and a layered array's layers; height 0 for linear memory and, through
/// a surface, for a 1D array, whose texture answers 1.
fn query_value(img: &Image, q: ImageQuery, surface: bool) -> u32 {
    let [_, height, depth] = img.extent_as_made;
    let v = match q {
        ImageQuery::Width => img.width,
        ImageQuery::Height
            if height == 0
                && !surface
                && matches!(img.storage, crate::texture::Storage::Array(_)) =>
        {
            1
        }
        ImageQuery::Height => height,
        ImageQuery::Depth => depth,
        // A cubemap array's size counts cubes (not recorded).
        ImageQuery::ArraySize if img.cubemap && img.layered => img.depth / 6,
        ImageQuery::ArraySize if img.layered => img.depth,
        ImageQuery::ArraySize => 0,
        // Answered with the object's levels or sampler (`image`'s caller); never
        // reaches here.
        ImageQuery::MipmapLevels => 1,
        _ => 0,
    };
    v as u32
}

/// `txq`'s sampler queries of a texture object (unified mode). The ISA names the values
/// (`nearest`, `linear`; `wrap`, `mirror`, `clamp_ogl`, `clamp_to_edge`,
/// `clamp_to_border`) but not their numbers; these are CUDA's own enumerations, which
/// the texture object was made with (CUfilter_mode: point 0, linear 1; CUaddress_mode:
/// wrap 0, clamp 1, mirror 2, border 3), `normalized_coords` 1 when the coordinates are
/// normalized, and `force_unnormalized_coords` 0 (a texture object's sampler forces
/// nothing: an explicit `.samplerref` would). What the H200 answers is not recorded:
/// clients/runtime/texture_queries.cu prints it.
fn sampler_value(s: &crate::texture::Sampler, q: ImageQuery) -> u32 {
    use crate::texture::AddressMode;
    match q {
        ImageQuery::FilterMode => s.linear as u32,
        ImageQuery::AddrMode(k) => match s.address[k as usize % 3] {
            AddressMode::Wrap => 0,
            AddressMode::Clamp => 1,
            AddressMode::Mirror => 2,
            AddressMode::Border => 3,
        },
        ImageQuery::NormalizedCoords => s.normalized_coords as u32,
        _ => 0,
    }
}

/// The byte offset of a surface access of `access` bytes in lane `l`: x in units of
/// `x_unit` bytes (1 for `.b`, the sample's size for `.p`; the offset must be a multiple
/// of the access), y and z in rows and slices, the layer first when layered. Out of the
/// image: `.trap` is an error, `.clamp` the nearest element, `.zero` None.
fn element_offset(
    img: &Image,
    geom: Geom,
    c: &[Lanes],
    l: usize,
    access: u64,
    bounds: Bounds,
    x_unit: u64,
) -> Result<Option<u64>, String> {
    let signed = |k: usize| c[k][l] as u32 as i32 as i64;
    let first = geom.layered() as usize;
    let mut pos = [0i64; 3];
    for (k, p) in pos.iter_mut().enumerate().take(geom.dims()) {
        *p = signed(first + k);
    }
    // `.p`'s x is a sample (texel) index, `.b`'s a byte offset (the PTX ISA).
    pos[0] *= x_unit as i64;
    let slice_index = if geom.layered() { signed(0) } else { pos[2] };
    let row_bytes = img.width as i64 * img.format.texel_bytes() as i64;
    if pos[0] % access as i64 != 0 {
        return Err(format!(
            "surface x {} (bytes) is not a multiple of the {access}-byte access",
            pos[0]
        ));
    }
    let limits = [
        row_bytes - access as i64,
        img.height as i64 - 1,
        img.depth as i64 - 1,
    ];
    let mut at = [pos[0], pos[1], slice_index];
    let dims_checked: &[usize] = match (geom.dims(), geom.layered()) {
        (1, false) => &[0],
        (2, false) => &[0, 1],
        (1, true) => &[0, 2],
        (2, true) => &[0, 1, 2],
        _ => &[0, 1, 2],
    };
    for &k in dims_checked {
        if at[k] < 0 || at[k] > limits[k] {
            match bounds {
                Bounds::Trap => {
                    return Err(format!(
                        "surface access at ({}, {}, {}) lies outside the {}x{}x{} surface \
                         (x in bytes, {} per row)",
                        at[0], at[1], at[2], img.width, img.height, img.depth, row_bytes
                    ))
                }
                Bounds::Zero => return Ok(None),
                Bounds::Clamp => {
                    // The last x both a whole unit and a whole access.
                    let step = lcm(x_unit, access) as i64;
                    let hi = if k == 0 {
                        limits[0] - limits[0].rem_euclid(step)
                    } else {
                        limits[k]
                    };
                    at[k] = at[k].clamp(0, hi.max(0));
                }
            }
        }
    }
    Ok(Some(
        at[2] as u64 * img.slice_pitch + at[1] as u64 * img.row_pitch + at[0] as u64,
    ))
}

fn lcm(a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (a.max(1), b.max(1));
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a.max(1) / x * b.max(1)
}
