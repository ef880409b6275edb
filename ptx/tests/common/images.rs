//! A device memory that also holds texture and surface objects by handle, for the
//! texture tests.

use std::sync::Arc;

use cumock_ptx::{SurfaceObject, TextureObject};

use super::TestMemory;

pub struct ImageMemory {
    pub mem: TestMemory,
    pub textures: Vec<(u64, Arc<TextureObject>)>,
    pub surfaces: Vec<(u64, Arc<SurfaceObject>)>,
}

// Safety: as TestMemory's; the objects own their texels.
unsafe impl cumock_ptx::Memory for ImageMemory {
    fn translate(
        &self,
        addr: u64,
        len: u64,
        access: cumock_ptx::Access,
    ) -> Result<cumock_ptx::HostSpan, cumock_ptx::Fault> {
        self.mem.translate(addr, len, access)
    }
    fn texture(&self, h: u64) -> Option<Arc<TextureObject>> {
        self.textures.iter().find(|t| t.0 == h).map(|t| t.1.clone())
    }
    fn surface(&self, h: u64) -> Option<Arc<SurfaceObject>> {
        self.surfaces.iter().find(|t| t.0 == h).map(|t| t.1.clone())
    }
}
