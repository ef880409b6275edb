//! Green contexts (cuda.h's group CUDA_GREEN_CONTEXTS, `GreenContextsApi`): a device's SM
//! resource, its split, a descriptor, and the green contexts made of one, with their
//! streams, events and ids (model/green_contexts.rs, fitted to the H200's probe
//! green_contexts).

use super::Mock;
use crate::boundary::{Handle, Out};
use crate::model::error::*;
use crate::model::green_contexts::output_to_c;
use cumock_abi::*;

impl GreenContextsApi for Mock {
    emulate! {
        fn cuDeviceGetDevResource(d; dev, resource, type_) {
            resource.write(d.device_resource(dev, type_)?.to_c())
        }

        /// NULL: CUDA_ERROR_INVALID_CONTEXT (the model says why).
        fn cuCtxGetDevResource(d; ctx, resource, type_) {
            resource.write(d.ctx_resource(ctx, type_)?.to_c())
        }

        fn cuGreenCtxGetDevResource(d; green, resource, type_) {
            resource.write(d.green_resource(green, type_)?.to_c())
        }

        /// `result` NULL: the count query, `nbGroups` written with how many groups fit and
        /// `remaining` left as it was (probe split); else `nbGroups` is read as the array's
        /// length (0 is CUDA_ERROR_INVALID_VALUE, probe split) and written with how many
        /// were made, and `remaining` is written, zeroed where no SM is left.
        fn cuDevSmResourceSplitByCount(d; #[raw] result, #[raw] nb_groups, input, remaining, use_flags, min_count) {
            let count = Out::maybe(nb_groups).ok_or_else(|| invalid("nbGroups is NULL"))?;
            let wanted = (!result.is_null()).then(|| {
                // Safety: cuda.h's contract: with `result`, `nbGroups` holds its length.
                unsafe { nb_groups.read_unaligned() }
            });
            if wanted == Some(0) {
                return Err(invalid("nbGroups is 0 with a result array"));
            }
            let split = d.split_sm_resource(&input, wanted, use_flags, min_count)?;
            for (i, group) in split.groups.iter().enumerate() {
                // Safety: `result` holds `*nbGroups` resources (cuda.h), and no more groups
                // than that are made.
                unsafe { result.add(i).write_unaligned(group.to_c()) };
            }
            if let (Some(remaining), Some(_)) = (remaining, wanted) {
                remaining.write(output_to_c(split.remaining))?;
            }
            count.write(match wanted {
                Some(_) => split.groups.len() as u32,
                None => split.fit,
            })
        }

        fn cuDevResourceGenerateDesc(d; desc, #[slice] resources, _nb_resources) {
            desc.write_key(d.resource_desc(resources)?)
        }

        fn cuGreenCtxCreate(d; green, desc, dev, flags) {
            green.write_key(d.green_create(desc, dev, flags)?)
        }

        fn cuGreenCtxDestroy(d; green) {
            d.green_destroy(green)
        }

        fn cuCtxFromGreenCtx(d; ctx, green) {
            ctx.write_key(Some(d.green_context(green)?.context))
        }

        fn cuGreenCtxRecordEvent(d; green, event) {
            d.green_record_event(green, event)
        }

        fn cuGreenCtxWaitEvent(d; green, event) {
            d.green_wait_event(green, event)
        }

        /// A refusal may still write phStream (the model says when).
        fn cuGreenCtxStreamCreate(d; stream, green, flags, priority) {
            match d.green_stream_create(green, flags, priority) {
                Ok(s) => stream.write_key(s),
                Err((e, written)) => {
                    if let Some(s) = written {
                        stream.write_key(s)?;
                    }
                    Err(e)
                }
            }
        }

        /// A default stream's green context is the current context's (cuda.h).
        fn cuStreamGetGreenCtx(d; s, #[late] green) {
            let g = d.stream_green(s)?;
            green.write(g.map_or(std::ptr::null_mut(), |(g, _)| CUgreenCtx::of(g)))
        }

        /// NULL: the current context's green context (cuda.h), else CUDA_ERROR_INVALID_CONTEXT
        /// (probe green_contexts, ids). The id is its context's (cuCtxGetId), as on the H200
        /// (probe green_contexts, ids: "a's context's id is a's").
        fn cuGreenCtxGetId(d; green, id) {
            let green = match green.is_null() {
                true => d
                    .green_current()
                    .ok_or_else(|| invalid_context("NULL, and no green context is current"))?,
                false => green,
            };
            id.write(d.green_context(green)?.context.serial())
        }
    }
}
