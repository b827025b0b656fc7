//! What a container's spec gains, one file per thing, each a pure
//! function of the spec and of what the runtime learned of the host.

pub mod account;
