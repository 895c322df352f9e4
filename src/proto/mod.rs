//! The `plylog.v1` protobuf types (generated from proto/ at build time) and
//! their conversions to and from the domain types in [`convert`].

#[allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic)]
mod generated {
    tonic::include_proto!("plylog.v1");
}

pub mod convert;
mod replay;
mod stream;

pub use generated::*;
pub use replay::GetReplayResponse;
pub use stream::{StreamEventsResponse, stream_events_response};

/// The encoded file descriptor set of proto/, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/plylog_descriptor.bin"));
