//! The spec's seccomp profile (`linux.seccomp`), given the rules that
//! answer the sync calls with 0 without running them, for the programs
//! `LD_PRELOAD` cannot reach: static ones and every Go program.
//!
//! The rules are `eatmydata profile`'s (`profile/rules.rs`, which says
//! how a call the profile allows is taken over, and what stays as it
//! was), for the calls of the command's plain filter (`seccomp/filter.rs`,
//! its native table): a container under the runtime and one under the
//! profile get the same answers. A spec without a profile gets one that
//! allows everything else, on the architectures the command's filter
//! covers.

use serde_json::{Map, Value, json};

pub use crate::profile::rules::Answered;
use crate::profile::rules::{self, ALLOW};
use crate::seccomp::filter::ABIS;

/// The sync calls, by name, from the command's filter table.
fn sync_calls() -> Vec<&'static str> {
    ABIS[0].calls.iter().map(|&(name, _)| name).collect()
}

/// libseccomp's names of the ABIs in `ABIS`.
fn architectures() -> Vec<Value> {
    let name = |abi: &str| match abi {
        "x86_64" => "SCMP_ARCH_X86_64",
        "x32" => "SCMP_ARCH_X32",
        "i386" => "SCMP_ARCH_X86",
        _ => "SCMP_ARCH_AARCH64",
    };
    ABIS.iter().map(|abi| json!(name(abi.name))).collect()
}

/// Edits `linux` (the spec's `linux` object) so that the sync calls the
/// profile lets reach the kernel are answered 0. Fails only on a profile
/// that is not shaped as the runtime spec says.
pub fn edit(linux: &mut Map<String, Value>) -> Result<Answered, String> {
    let profile = linux
        .entry("seccomp")
        .and_modify(|profile| {
            if profile.is_null() {
                *profile = allowing();
            }
        })
        .or_insert_with(allowing);
    rules::add(profile, &sync_calls()).map_err(|why| format!("linux.seccomp: {why}"))
}

/// A profile that allows every call, on the filter's architectures.
fn allowing() -> Value {
    json!({ "defaultAction": ALLOW, "architectures": architectures(), "syscalls": [] })
}

#[cfg(test)]
mod tests;
