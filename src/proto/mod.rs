//! The `plylog.v1` protobuf types, generated from proto/ at build time, and
//! what the server does with them besides serving them:
//!
//! - [`convert`]: conversions to and from the domain types, one file per
//!   vocabulary (time, rules, seats, config, moves, outcomes, views).
//! - [`event_format`]: how events are stored in the log (the storage
//!   schema, which must stay compatible with every row already written).
//! - `replay.rs`: GetReplay's reply, encoded as it is built.
//! - `stream.rs`: StreamEvents' reply, encoded once per event.

#[allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic)]
mod generated {
    tonic::include_proto!("plylog.v1");
}

pub mod convert;
pub mod event_format;
mod replay;
mod stream;

pub use generated::*;
pub use replay::GetReplayResponse;
pub use stream::{StreamEventsResponse, stream_events_response};

/// The encoded file descriptor set of proto/, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/plylog_descriptor.bin"));
