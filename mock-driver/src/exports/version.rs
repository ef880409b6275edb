//! cuDriverGetVersion (cuda.h's group CUDA_VERSION): the profile's driver version.

use super::Mock;
use crate::boundary::drv_any;
use cumock_abi::*;

impl VersionApi for Mock {
    emulate! {
        // Before cuInit too; the profile is read before the pointer is checked.
        fn cuDriverGetVersion(; #[late] version) {
            version.write(drv_any()?.profile.driver_version)
        }
    }
}
