//! Texture and surface references (cuda.h's deprecated reference API): a module's
//! `.global .texref` and `.global .surfref` variables, found by name (cuModuleGetTexRef,
//! cuModuleGetSurfRef), and the references cuTexRefCreate makes apart from any module.
//!
//! A reference is state the program sets call by call (what it is bound to, its format,
//! address and filter modes, flags, mipmap settings, border colour), read back by the
//! Get* twins. A kernel names its module's reference by the handle the PTX decoder gives
//! it (`ptx::REFERENCE_WINDOW`); a launch snapshots every reference of the kernel's
//! module as the texture or surface object its state describes (`BoundReferences`), built
//! through the same descriptors cuTexObjectCreate and cuSurfObjectCreate take, so a later
//! Set changes nothing for a kernel already queued, as a later destroy changes nothing
//! for a texture object's. A texture reference never bound reads zeros, as on the H200
//! (probe texrefs, unbound-launch: `tex.1d.v4.u32.s32` read 0 0), nor does one whose
//! array or mipmapped array was destroyed, which is bound to nothing since (probe
//! texrefs, destroyed-array-launch, destroyed-other-bindings). One whose state makes no
//! object (a format the mock reads no texel of) is unbound in the snapshot: a kernel
//! reading it faults with CUDA_ERROR_ILLEGAL_ADDRESS naming the reference (unrecorded).
//!
//! The handles are the mock's (CUtexref is an opaque pointer in cuda.h): addresses above
//! the 47-bit user space, so no host pointer is taken for one. A module's references live
//! until the module is unloaded; cuda.h says not to destroy them, and cuTexRefDestroy of
//! one succeeds and changes nothing (the H200: probe texrefs, destroy-module-texref).
//!
//! Defaults before any Set are the H200's (probe texrefs, module-defaults; probe
//! api_gaps3, texture-references, for cuTexRefCreate's too): format float, 1 channel,
//! clamp in every dimension, point filtering, no flags, zeros elsewhere, unbound.
//!
//! The Sets check less than cuda.h suggests, as the H200 does (probe api_gaps3,
//! texture-references): cuTexRefSetFormat takes a value cuda.h does not name (0x77) and
//! cuTexRefSetFilterMode one past CUfilter_mode (7), each read back as given; only the
//! channel count is refused (3). Such a state makes no texture, so a kernel reading the
//! reference faults as for a destroyed array (above). A NULL reference is
//! CUDA_ERROR_INVALID_HANDLE; another handle the mock never gave is
//! CUDA_ERROR_INVALID_VALUE (the H200 would take it for a pointer).

use std::collections::HashMap;
use std::sync::Arc;

use cumock_abi::{CUDA_ARRAY_DESCRIPTOR, CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC};
use cumock_ptx as ptx;

use super::error::*;
use super::ids::{ArrayId, MipmappedArrayId, ModuleId};
use super::textures::{
    channel_format, ATTR_TEXTURE_ALIGNMENT, ATTR_TEXTURE_PITCH_ALIGNMENT, RESOURCE_ARRAY,
    RESOURCE_LINEAR, RESOURCE_MIPMAPPED_ARRAY, RESOURCE_PITCH2D, SURFACE_LDST,
    TRSF_NORMALIZED_COORDINATES, TRSF_READ_AS_INTEGER, TRSF_SRGB,
};
use super::Driver;

/// cuda.h's flag of cuTexRefSetArray and cuTexRefSetMipmappedArray: "override the texref
/// format with a format inferred from the array".
pub const TRSA_OVERRIDE_FORMAT: u32 = 0x01;
/// cuda.h's CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION: the mock filters exactly anyway.
const TRSF_DISABLE_TRILINEAR_OPTIMIZATION: u32 = 0x20;
/// What cuTexRefSetFlags takes: cuda.h's CU_TRSF_* flags but CU_TRSF_SEAMLESS_CUBEMAP,
/// which the H200 refuses (CUDA_ERROR_INVALID_VALUE, the flags kept: probe texrefs,
/// mipmap-setters, a module's reference bound to nothing). cuTexRefCreate's and one bound
/// to a cubemap array are taken to refuse it too (section seamless-cubemap-flag awaits
/// a recording).
const KNOWN_FLAGS: u32 = TRSF_READ_AS_INTEGER
    | TRSF_NORMALIZED_COORDINATES
    | TRSF_SRGB
    | TRSF_DISABLE_TRILINEAR_OPTIMIZATION;

/// What a reference reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Binding {
    Unbound,
    Array(ArrayId),
    Mipmapped(MipmappedArrayId),
    /// cuTexRefSetAddress: `bytes` from `base`, the texture-aligned address at or below
    /// the program's pointer, which is `base + offset` (the ByteOffset returned).
    Linear {
        base: u64,
        offset: u64,
        bytes: u64,
    },
    /// cuTexRefSetAddress2D.
    Pitch2D {
        base: u64,
        width: u64,
        height: u64,
        pitch: u64,
    },
}

/// One texture or surface reference and its state.
#[derive(Debug, Clone)]
pub struct TextureReference {
    /// The module and the index of its `.texref`/`.surfref` (`ptx::Module::references`);
    /// None for cuTexRefCreate's.
    pub module: Option<(ModuleId, usize)>,
    pub surface: bool,
    pub binding: Binding,
    /// CUarray_format and channel count (cuTexRefSetFormat).
    pub format: i32,
    pub channels: u32,
    pub address: [i32; 3],
    pub filter: i32,
    pub mipmap_filter: i32,
    pub mipmap_bias: f32,
    pub mipmap_clamp: [f32; 2],
    pub max_anisotropy: u32,
    pub border: [f32; 4],
    pub flags: u32,
}

impl TextureReference {
    fn new(module: Option<(ModuleId, usize)>, surface: bool) -> Self {
        TextureReference {
            module,
            surface,
            binding: Binding::Unbound,
            format: 0x20,
            channels: 1,
            address: [1; 3],
            filter: 0,
            mipmap_filter: 0,
            mipmap_bias: 0.0,
            mipmap_clamp: [0.0; 2],
            max_anisotropy: 0,
            border: [0.0; 4],
            flags: 0,
        }
    }

    /// The descriptors cuTexObjectCreate would take for the texture this state reads.
    fn descriptors(&self) -> Option<(CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC)> {
        let mut res = CUDA_RESOURCE_DESC {
            res_type: 0,
            res: [0; 16],
            flags: 0,
        };
        let format_word = self.format as u32 as u64 | (u64::from(self.channels) << 32);
        match self.binding {
            Binding::Unbound => return None,
            Binding::Array(a) => {
                res.res_type = RESOURCE_ARRAY;
                res.res[0] = a.handle();
            }
            Binding::Mipmapped(m) => {
                res.res_type = RESOURCE_MIPMAPPED_ARRAY;
                res.res[0] = m.handle();
            }
            Binding::Linear { base, bytes, .. } => {
                res.res_type = RESOURCE_LINEAR;
                res.res[0] = base;
                res.res[1] = format_word;
                res.res[2] = bytes;
            }
            Binding::Pitch2D {
                base,
                width,
                height,
                pitch,
            } => {
                res.res_type = RESOURCE_PITCH2D;
                res.res[0] = base;
                res.res[1] = format_word;
                res.res[2] = width;
                res.res[3] = height;
                res.res[4] = pitch;
            }
        }
        let tex = CUDA_TEXTURE_DESC {
            address_mode: self.address,
            filter_mode: self.filter,
            flags: self.flags & !TRSF_DISABLE_TRILINEAR_OPTIMIZATION,
            max_anisotropy: self.max_anisotropy,
            mipmap_filter_mode: self.mipmap_filter,
            mipmap_level_bias: self.mipmap_bias,
            min_mipmap_level_clamp: self.mipmap_clamp[0],
            max_mipmap_level_clamp: self.mipmap_clamp[1],
            border_color: self.border,
            reserved: [0; 12],
        };
        Some((res, tex))
    }
}

/// Every reference, by handle.
#[derive(Debug, Default)]
pub struct TextureReferences {
    refs: HashMap<u64, TextureReference>,
    /// A module's reference `i` that cuModuleGetTexRef/GetSurfRef has handed out.
    by_module: HashMap<(ModuleId, usize), u64>,
    next: u64,
}

/// Reference handles: above the 47-bit user space, apart from arrays' and objects'.
const REFERENCE_HANDLE_BASE: u64 = 0xa7a9_0000_0000_0000;

impl TextureReferences {
    fn add(&mut self, r: TextureReference) -> u64 {
        self.next += 1;
        let h = REFERENCE_HANDLE_BASE + self.next * 0x100;
        if let Some(key) = r.module {
            self.by_module.insert(key, h);
        }
        self.refs.insert(h, r);
        h
    }

    /// References bound to a destroyed array or mipmapped array (`gone`) are bound to
    /// nothing since: the H200 answers cuTexRefGetArray, cuTexRefGetMipmappedArray and
    /// cuSurfRefGetArray of one with CUDA_ERROR_INVALID_VALUE, and a kernel reads 0
    /// through such a texture reference, as through one never bound (probe texrefs,
    /// destroyed-array-launch, destroyed-other-bindings). A kernel reading such a
    /// surface reference faults, as through one never bound (unrecorded).
    pub fn forget_binding(&mut self, gone: Binding) {
        for r in self.refs.values_mut() {
            if r.binding == gone {
                r.binding = Binding::Unbound;
            }
        }
    }

    /// A module's references go with it (cuModuleUnload).
    pub fn forget_module(&mut self, m: ModuleId) {
        self.by_module.retain(|(module, _), _| *module != m);
        self.refs
            .retain(|_, r| r.module.is_none_or(|(module, _)| module != m));
    }
}

/// What a module's references read at one launch, by index in the module
/// (`ptx::Module::references`).
#[derive(Debug, Default)]
pub struct BoundReferences {
    images: Vec<ReferenceImage>,
}

#[derive(Debug)]
enum ReferenceImage {
    Unbound,
    Texture(Arc<ptx::TextureObject>),
    Surface(Arc<ptx::SurfaceObject>),
}

impl BoundReferences {
    pub fn texture(&self, handle: u64) -> Option<Arc<ptx::TextureObject>> {
        match self.images.get(ptx::reference_index(handle)?)? {
            ReferenceImage::Texture(t) => Some(t.clone()),
            _ => None,
        }
    }

    pub fn surface(&self, handle: u64) -> Option<Arc<ptx::SurfaceObject>> {
        match self.images.get(ptx::reference_index(handle)?)? {
            ReferenceImage::Surface(s) => Some(s.clone()),
            _ => None,
        }
    }
}

/// cuTexRefSetMipmapFilterMode's check (cuda.h's CUfilter_mode values): the H200 refuses
/// 2, 7 and -1 there, the mode kept (probe texrefs, mipmap-setters), where it took
/// cuTexRefSetFilterMode 7 (probe api_gaps3, texture-references), which checks nothing.
fn check_mipmap_filter(fm: i32) -> CuResult<()> {
    match fm {
        0 | 1 => Ok(()),
        m => Err(invalid(format!("{m} is not a CUfilter_mode"))),
    }
}

impl Driver {
    /// cuModuleGetTexRef (`surface` false) and cuModuleGetSurfRef: the same handle for
    /// the same name each time.
    pub fn module_reference(&self, module: ModuleId, name: &str, surface: bool) -> CuResult<u64> {
        let mut st = self.state.lock();
        self.current_device(&st)?;
        let m = st.modules.module(module)?;
        let kind = if surface { "surface" } else { "texture" };
        let index = m
            .program
            .references
            .iter()
            .position(|r| r.name == name && r.surface == surface)
            .ok_or_else(|| {
                CuError::new(
                    cumock_abi::result::CUDA_ERROR_NOT_FOUND,
                    format!("the module has no {kind} reference named `{name}`"),
                )
            })?;
        let refs = &mut st.texture_references;
        if let Some(h) = refs.by_module.get(&(module, index)) {
            return Ok(*h);
        }
        Ok(refs.add(TextureReference::new(Some((module, index)), surface)))
    }

    /// cuTexRefCreate: a reference of no module, whose state calls set and read.
    pub fn texture_reference_create(&self) -> CuResult<u64> {
        let mut st = self.state.lock();
        self.current_device(&st)?;
        Ok(st
            .texture_references
            .add(TextureReference::new(None, false)))
    }

    /// cuTexRefDestroy: cuTexRefCreate's goes; a module's (cuda.h: it "should not be
    /// destroyed, since it will be destroyed when the module is unloaded") stays with its
    /// module, and the call succeeds, as on the H200 (probe texrefs,
    /// destroy-module-texref).
    pub fn texture_reference_destroy(&self, h: u64) -> CuResult<()> {
        let mut st = self.state.lock();
        let r = reference(&st.texture_references, h, false)?;
        if r.module.is_none() {
            st.texture_references.refs.remove(&h);
        }
        Ok(())
    }

    /// The state of texture reference `h` (`surface`: of surface reference `h`).
    pub fn texture_reference(&self, h: u64, surface: bool) -> CuResult<TextureReference> {
        let st = self.state.lock();
        reference(&st.texture_references, h, surface).cloned()
    }

    /// Changes texture reference `h`'s state by `set`, which may refuse.
    pub fn set_texture_reference(
        &self,
        h: u64,
        set: impl FnOnce(&mut TextureReference) -> CuResult<()>,
    ) -> CuResult<()> {
        let mut st = self.state.lock();
        self.current_device(&st)?;
        set(reference_mut(&mut st.texture_references, h, false)?)
    }

    /// cuTexRefSetArray (`Ok(array)`) or cuTexRefSetMipmappedArray. cuda.h says `Flags`
    /// must be CU_TRSA_OVERRIDE_FORMAT; the H200 takes 0 for both and refuses 2 (probe
    /// api_gaps3, texture-references; probe texrefs, mipmap-setters), so the flag means
    /// what cuda.h's definition says: with it the reference takes the array's format,
    /// without it keeps its own (mipmap-setters: float x1 read back after binding a u8 x4
    /// mipmapped array with 0).
    pub fn texture_reference_bind_array(
        &self,
        h: u64,
        array: Result<ArrayId, MipmappedArrayId>,
        flags: u32,
    ) -> CuResult<()> {
        if flags & !TRSA_OVERRIDE_FORMAT != 0 {
            return Err(invalid(format!(
                "Flags {flags:#x}: CU_TRSA_OVERRIDE_FORMAT is the only flag (cuda.h)"
            )));
        }
        let (format, channels, binding) = {
            let st = self.state.lock();
            match array {
                Ok(a) => {
                    let array = st.textures.array(a)?;
                    // The level 0 of the mipmapped array the reference is bound to: the
                    // H200 answers CUDA_SUCCESS and the reference stays bound to the
                    // mipmapped array (probe texrefs, mipmap-level-as-array). Any other
                    // level, or a level 0 of another or with the reference elsewhere, is
                    // bound as an array (mipmap-level-reads: level 1 of the bound
                    // mipmapped array, level 0 of an unbound or array-bound reference).
                    if let Some(m) = array.mipmapped {
                        let level0 = st.textures.mipmapped(m)?.levels.first() == Some(&a);
                        let bound = reference(&st.texture_references, h, false)
                            .map(|r| matches!(r.binding, Binding::Mipmapped(b) if b == m))?;
                        if level0 && bound {
                            drop(st);
                            return self.set_texture_reference(h, |_| Ok(()));
                        }
                    }
                    let d = array.desc;
                    (d.format, d.num_channels, Binding::Array(a))
                }
                Err(m) => {
                    let d = st.textures.mipmapped(m)?.desc;
                    (d.format, d.num_channels, Binding::Mipmapped(m))
                }
            }
        };
        self.set_texture_reference(h, |r| {
            r.binding = binding;
            if flags & TRSA_OVERRIDE_FORMAT != 0 {
                r.format = format;
                r.channels = channels;
            }
            Ok(())
        })
    }

    /// cuTexRefSetAddress_v2: binds `bytes` of linear memory at `dptr` in the format set
    /// by cuTexRefSetFormat, from the texture-aligned address at or below `dptr`; returns
    /// the byte offset of `dptr` from there (0 for cuMemAlloc's pointers), which the
    /// kernel adds to its fetches (cuda.h).
    pub fn texture_reference_bind_linear(&self, h: u64, dptr: u64, bytes: u64) -> CuResult<u64> {
        let align = self.texture_attribute(ATTR_TEXTURE_ALIGNMENT)?;
        let offset = dptr % align;
        let base = dptr - offset;
        let span = offset.saturating_add(bytes);
        if dptr != 0 {
            let st = self.state.lock();
            super::copies::within_requested(&st.vmm, base, span)?;
        }
        self.set_texture_reference(h, |r| {
            // Address 0 is bound as any other: the H200 answers cuTexRefGetAddress with 0
            // after it (probe texrefs, linear-offset); a kernel reading it faults here.
            if dptr == 0 {
                r.binding = Binding::Linear {
                    base: 0,
                    offset: 0,
                    bytes,
                };
                return Ok(());
            }
            // A format the mock reads no texel of (0x77) binds all the same, as on the
            // H200 (probe api_gaps3, texture-references); a launch reading it faults.
            if let Ok(format) = channel_format(r.format, r.channels) {
                if span < format.texel_bytes() {
                    return Err(invalid(format!(
                        "{bytes} bytes hold no element of {} bytes",
                        format.texel_bytes()
                    )));
                }
            }
            r.binding = Binding::Linear {
                base,
                offset,
                bytes: span,
            };
            Ok(())
        })?;
        Ok(offset)
    }

    /// cuTexRefSetAddress2D_v3: `dptr` aligned to the texture alignment and `pitch` to
    /// the texture pitch alignment (cuda.h: CUDA_ERROR_INVALID_VALUE otherwise); the
    /// descriptor's format becomes the reference's.
    pub fn texture_reference_bind_pitch2d(
        &self,
        h: u64,
        desc: CUDA_ARRAY_DESCRIPTOR,
        dptr: u64,
        pitch: u64,
    ) -> CuResult<()> {
        let align = self.texture_attribute(ATTR_TEXTURE_ALIGNMENT)?;
        let pitch_align = self.texture_attribute(ATTR_TEXTURE_PITCH_ALIGNMENT)?;
        let format = channel_format(desc.format, desc.num_channels)?;
        if dptr == 0 || !dptr.is_multiple_of(align) {
            return Err(invalid(format!(
                "dptr {dptr:#x} is not aligned to the texture alignment ({align} bytes)"
            )));
        }
        let (width, height) = (desc.width as u64, desc.height as u64);
        if !pitch.is_multiple_of(pitch_align)
            || width == 0
            || height == 0
            || pitch < width.saturating_mul(format.texel_bytes())
        {
            return Err(invalid(format!(
                "{width}x{height} elements, pitch {pitch}: the pitch must hold a row and be \
                 a multiple of the texture pitch alignment ({pitch_align} bytes)"
            )));
        }
        {
            let st = self.state.lock();
            let span = (height - 1) * pitch + width * format.texel_bytes();
            super::copies::within_requested(&st.vmm, dptr, span)?;
        }
        self.set_texture_reference(h, |r| {
            r.binding = Binding::Pitch2D {
                base: dptr,
                width,
                height,
                pitch,
            };
            r.format = desc.format;
            r.channels = desc.num_channels;
            Ok(())
        })
    }

    /// cuTexRefSetFormat. cuda.h says it "cannot follow" cuTexRefSetAddress2D (whose
    /// descriptor gave the format), but the H200 takes it there and reports the new
    /// format (probe texrefs, format-rules), which the pitch-linear memory is then read in.
    /// The H200 refuses 3 channels of float and takes format 0x77, which cuda.h does not
    /// name (probe api_gaps3, texture-references): the channel count is all it checks.
    pub fn texture_reference_set_format(&self, h: u64, format: i32, channels: i32) -> CuResult<()> {
        let channels = u32::try_from(channels)
            .ok()
            .filter(|c| matches!(c, 1 | 2 | 4))
            .ok_or_else(|| {
                invalid(format!(
                    "NumPackedComponents {channels}: an element has 1, 2 or 4 channels"
                ))
            })?;
        self.set_texture_reference(h, |r| {
            r.format = format;
            r.channels = channels;
            Ok(())
        })
    }

    /// cuTexRefSetAddressMode: dimensions 0 to 2, CUaddress_mode values.
    pub fn texture_reference_set_address_mode(&self, h: u64, dim: i32, am: i32) -> CuResult<()> {
        let d = usize::try_from(dim)
            .ok()
            .filter(|d| *d < 3)
            .ok_or_else(|| invalid(format!("dimension {dim}: a texture has 0 to 2")))?;
        if !(0..=3).contains(&am) {
            return Err(invalid(format!("{am} is not a CUaddress_mode")));
        }
        self.set_texture_reference(h, |r| {
            r.address[d] = am;
            Ok(())
        })
    }

    /// cuTexRefSetFilterMode (`mipmap` false) and cuTexRefSetMipmapFilterMode.
    pub fn texture_reference_set_filter(&self, h: u64, fm: i32, mipmap: bool) -> CuResult<()> {
        if mipmap {
            check_mipmap_filter(fm)?;
        }
        self.set_texture_reference(h, |r| {
            if mipmap {
                r.mipmap_filter = fm;
            } else {
                r.filter = fm;
            }
            Ok(())
        })
    }

    /// cuTexRefSetFlags: cuda.h's CU_TRSF_* flags.
    pub fn texture_reference_set_flags(&self, h: u64, flags: u32) -> CuResult<()> {
        if flags & !KNOWN_FLAGS != 0 {
            return Err(invalid(format!("unknown CU_TRSF flags {flags:#x}")));
        }
        self.set_texture_reference(h, |r| {
            r.flags = flags;
            Ok(())
        })
    }

    fn texture_attribute(&self, code: i32) -> CuResult<u64> {
        let st = self.state.lock();
        let (_, device) = self.current_device(&st)?;
        Ok(self.profile.devices[device]
            .attribute(code)
            .unwrap_or(0)
            .max(1) as u64)
    }

    /// cuSurfRefSetArray: `Flags` 0 and an array made with CUDA_ARRAY3D_SURFACE_LDST
    /// (cuda.h; the H200's answer without the flag is awaiting a recording, probe texrefs).
    pub fn surface_reference_bind(&self, h: u64, array: ArrayId, flags: u32) -> CuResult<()> {
        if flags != 0 {
            return Err(invalid(format!(
                "Flags {flags:#x}: cuda.h says they must be 0"
            )));
        }
        let mut st = self.state.lock();
        self.current_device(&st)?;
        let a = st.textures.array(array)?;
        if a.desc.flags & SURFACE_LDST == 0 {
            return Err(invalid(
                "the array was not created with CUDA_ARRAY3D_SURFACE_LDST (cuda.h requires it)",
            ));
        }
        let (format, channels) = (a.desc.format, a.desc.num_channels);
        let r = reference_mut(&mut st.texture_references, h, true)?;
        r.binding = Binding::Array(array);
        r.format = format;
        r.channels = channels;
        Ok(())
    }

    /// What the references of `module` read at a launch on `device` (queue semantics:
    /// later Sets do not reach it).
    pub fn bound_references(&self, module: ModuleId, device: usize) -> Arc<BoundReferences> {
        let st = self.state.lock();
        let Ok(m) = st.modules.module(module) else {
            return Arc::default();
        };
        if m.program.references.is_empty() {
            return Arc::default();
        }
        let images = (0..m.program.references.len())
            .map(|i| {
                let never_bound = if m.program.references[i].surface {
                    ReferenceImage::Unbound
                } else {
                    ReferenceImage::Texture(empty_texture())
                };
                let Some(r) = st
                    .texture_references
                    .by_module
                    .get(&(module, i))
                    .and_then(|h| st.texture_references.refs.get(h))
                else {
                    return never_bound;
                };
                let Some((res, tex)) = r.descriptors() else {
                    return never_bound;
                };
                let made = if r.surface {
                    self.surface_from_resource(&st, device, &res)
                        .map(|s| ReferenceImage::Surface(Arc::new(s)))
                } else {
                    self.texture_from_descriptors(&st, device, &res, &tex, None)
                        .and_then(|t| match r.binding {
                            Binding::Array(_) => in_reference_format(t, r),
                            _ => Ok(t),
                        })
                        .map(|t| ReferenceImage::Texture(Arc::new(t)))
                };
                made.unwrap_or(ReferenceImage::Unbound)
            })
            .collect();
        Arc::new(BoundReferences { images })
    }
}

/// A texture over an array read in the reference's format where cuTexRefSetFormat changed
/// it since the binding: the array's bytes, rows as far apart as the array's, taken as
/// elements of that format (the H200 read texel (2, 1) of a 4 x 2 float array through u8
/// x1 as byte 18, the third of float 10's: 32/255, probe texrefs, format-rules; and
/// texel (1, 1) through float x2 as floats 6 and 7, 12: format-wider). Where the
/// elements are wider than the array's, a row holds as many of them as fit in the array's
/// row (two float x2 in four floats), so that no read leaves the array; what the H200
/// reads past them is not recorded.
fn in_reference_format(
    mut t: ptx::TextureObject,
    r: &TextureReference,
) -> CuResult<ptx::TextureObject> {
    let format = channel_format(r.format, r.channels)?;
    if format == t.image.format {
        return Ok(t);
    }
    let (element, array_element) = (format.texel_bytes(), t.image.format.texel_bytes());
    if element > array_element {
        t.image.width = t.image.width * array_element / element;
    }
    t.image.format = format;
    Ok(t)
}

/// What a texture reference never bound reads: a texture of no texel, whose every fetch is
/// the border, zeros (the H200 read zeros: probe texrefs, unbound-launch).
fn empty_texture() -> Arc<ptx::TextureObject> {
    let format = ptx::Format {
        kind: ptx::ChannelKind::Float,
        bits: 32,
        channels: 1,
    };
    Arc::new(ptx::TextureObject {
        image: ptx::Image {
            format,
            width: 0,
            height: 0,
            depth: 0,
            layered: false,
            cubemap: false,
            extent_as_made: [0; 3],
            row_pitch: 0,
            slice_pitch: 0,
            storage: ptx::Storage::Device(0),
        },
        sampler: ptx::Sampler {
            address: [ptx::AddressMode::Border; 3],
            linear: false,
            normalized_coords: false,
            read_normalized: true,
            border: [0.0; 4],
            mipmap: ptx::MipmapSampler::default(),
            seamless_cubemap: false,
            srgb: false,
        },
        levels: Vec::new(),
    })
}

/// Reference `h` of the kind asked (a texture reference's calls refuse a surface
/// reference's handle and back).
fn reference(refs: &TextureReferences, h: u64, surface: bool) -> CuResult<&TextureReference> {
    refs.refs
        .get(&h)
        .filter(|r| r.surface == surface)
        .ok_or_else(|| not_a_reference(h, surface))
}

fn reference_mut(
    refs: &mut TextureReferences,
    h: u64,
    surface: bool,
) -> CuResult<&mut TextureReference> {
    refs.refs
        .get_mut(&h)
        .filter(|r| r.surface == surface)
        .ok_or_else(|| not_a_reference(h, surface))
}

/// NULL is CUDA_ERROR_INVALID_HANDLE, as the H200 answers cuTexRefSetFormat,
/// cuTexRefGetFlags, cuTexRefDestroy and cuSurfRefGetArray (probe api_gaps3,
/// texture-references); any other handle the mock did not give, CUDA_ERROR_INVALID_VALUE.
fn not_a_reference(h: u64, surface: bool) -> CuError {
    let kind = if surface { "surface" } else { "texture" };
    if h == 0 {
        invalid_handle(format!("the {kind} reference is NULL"))
    } else {
        invalid(format!("{h:#x} is not a {kind} reference"))
    }
}
