//! Each parameter's role, as gen.py derives it from the headers' types, names and
//! documentation and `gen/roles.txt`, on functions whose meaning is known: if a rule
//! changes what a known parameter is, these fail before the mock's conversion does.

use cumock_abi::{export, Role};

/// The roles of an export's parameters, by name.
fn roles(name: &str) -> Vec<(&'static str, Role)> {
    export(name)
        .and_then(|e| e.params)
        .unwrap_or_else(|| panic!("{name} is not declared"))
        .iter()
        .map(|p| (p.name, p.role))
        .collect()
}

#[test]
fn cu_mem_map_takes_an_address_sizes_an_allocation_and_reserved_flags() {
    assert_eq!(
        roles("cuMemMap"),
        [
            ("ptr", Role::DeviceAddress),
            ("size", Role::Value),
            ("offset", Role::Value),
            ("handle", Role::Handle("CUmemGenericAllocationHandle")),
            ("flags", Role::Flags("reserved")),
        ]
    );
}

#[test]
fn cu_mem_create_writes_a_handle_and_reads_one_property_struct() {
    assert_eq!(
        roles("cuMemCreate"),
        [
            ("handle", Role::Out { nullable: false }),
            ("size", Role::Value),
            ("prop", Role::In { nullable: false }),
            ("flags", Role::Flags("reserved")),
        ]
    );
}

#[test]
fn cu_module_get_function_writes_a_function_of_a_module_found_by_name() {
    assert_eq!(
        roles("cuModuleGetFunction"),
        [
            ("hfunc", Role::Out { nullable: false }),
            ("hmod", Role::Handle("CUmodule")),
            ("name", Role::String { nullable: false }),
        ]
    );
}

#[test]
fn cu_launch_kernel_takes_a_function_dimensions_a_stream_and_two_optional_arrays() {
    let r = roles("cuLaunchKernel");
    assert_eq!(r[0], ("f", Role::Handle("CUfunction")));
    assert!(r[1..8].iter().all(|(_, role)| *role == Role::Value));
    assert_eq!(r[8], ("hStream", Role::Handle("CUstream")));
    // One pointer per kernel parameter (the count is the kernel's), or NULL.
    let args = Role::Array {
        count: "",
        nullable: true,
    };
    assert_eq!(r[9..], [("kernelParams", args), ("extra", args)]);
}

#[test]
fn cu_mem_get_allocation_granularity_reads_an_enum_option() {
    assert_eq!(
        roles("cuMemGetAllocationGranularity"),
        [
            ("granularity", Role::Out { nullable: false }),
            ("prop", Role::In { nullable: false }),
            ("option", Role::Enum("CUmemAllocationGranularity_flags")),
        ]
    );
}

#[test]
fn counted_arrays_find_their_count_and_a_filled_array_makes_its_count_in_out() {
    // `desc, count`: the count right after the array.
    assert_eq!(
        roles("cuMemSetAccess")[2],
        (
            "desc",
            Role::Array {
                count: "count",
                nullable: false
            }
        )
    );
    // The driver fills up to *numNodes; NULL asks for the count alone.
    assert_eq!(
        roles("cuGraphGetNodes")[1..],
        [
            (
                "nodes",
                Role::OutArray {
                    count: "numNodes",
                    nullable: true
                }
            ),
            ("numNodes", Role::InOut { nullable: false }),
        ]
    );
    // A count that names its array, before it.
    assert_eq!(
        roles("cuPointerGetAttributes")[1],
        (
            "attributes",
            Role::Array {
                count: "numAttributes",
                nullable: false
            }
        )
    );
    // A buffer for a string, its length beside it.
    assert_eq!(
        roles("cuDeviceGetName"),
        [
            (
                "name",
                Role::OutArray {
                    count: "len",
                    nullable: false
                }
            ),
            ("len", Role::Value),
            ("dev", Role::Handle("CUdevice")),
        ]
    );
}

#[test]
fn cuda_h_documentation_makes_optional_outputs_nullable() {
    let r = roles("cuStreamGetCaptureInfo_v3");
    assert_eq!(r[1], ("captureStatus_out", Role::Out { nullable: false }));
    assert!(r[2..]
        .iter()
        .all(|(_, role)| *role == Role::Out { nullable: true }));
}

#[test]
fn a_pair_line_makes_both_pointers_nullable_where_the_export_has_both() {
    let nullable_out = Role::Out { nullable: true };
    let v2 = roles("cuStreamGetCtx_v2");
    assert_eq!(
        &v2[1..],
        [("pctx", nullable_out), ("pGreenCtx", nullable_out)]
    );
    assert_eq!(roles("cuStreamGetCtx_v2_ptsz")[1..], v2[1..]);
    // The first version has no green context: its one out-parameter is required.
    assert_eq!(
        roles("cuStreamGetCtx")[1],
        ("pctx", Role::Out { nullable: false })
    );
    assert_eq!(roles("cuGraphGetEdges_v2")[1], ("from", nullable_out));
    assert_eq!(roles("cuGraphGetEdges_v2")[2], ("to", nullable_out));
}

#[test]
fn every_handle_and_enum_role_names_a_declared_type() {
    for e in cumock_abi::api::EXPORTS {
        for p in e.params.unwrap_or(&[]) {
            if let Role::Handle(t) | Role::Enum(t) = p.role {
                assert!(
                    p.rust_type.ends_with(t),
                    "{}'s {} is a {t} but is declared {}",
                    e.name,
                    p.name,
                    p.rust_type
                );
            }
            let pointer = p.rust_type.starts_with('*');
            let pointer_role = matches!(
                p.role,
                Role::In { .. }
                    | Role::Out { .. }
                    | Role::InOut { .. }
                    | Role::Array { .. }
                    | Role::OutArray { .. }
                    | Role::String { .. }
                    | Role::HostMemory
            );
            assert_eq!(
                pointer, pointer_role,
                "{}'s {} ({}) is {:?}",
                e.name, p.name, p.rust_type, p.role
            );
        }
    }
}

/// roles.txt's `trace` lines name parameters the declaration has (gen.py refuses the
/// others) and enums cuda.h has; a rename gives a name no other parameter of the call
/// has, so that no two of a call's values share a key in the trace.
#[test]
fn the_trace_lines_name_declared_parameters_and_enums() {
    for (base, param, name) in cumock_abi::TRACE_NAMES {
        let calls: Vec<_> = cumock_abi::api::EXPORTS
            .iter()
            .filter(|e| e.proc.is_some_and(|p| p.base == *base))
            .collect();
        assert!(!calls.is_empty(), "{base} is not declared");
        for e in calls {
            let params = e.params.unwrap();
            if params.iter().any(|p| p.name == *param) {
                assert!(
                    params.iter().all(|p| p.name != *name),
                    "{}: {param} renamed {name}, the name of another parameter",
                    e.name
                );
            }
        }
    }
    for (_, _, how) in cumock_abi::TRACE_AS {
        if let Some(e) = how.strip_prefix("out-enum:") {
            assert!(!cumock_abi::enum_values(e).is_empty(), "{e}");
        }
    }
    assert!(cumock_abi::TRACE_NAMES.contains(&("cuMemAlloc", "dptr", "ptr")));
}
