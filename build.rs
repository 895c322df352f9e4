//! Compiles the protos in proto/ with protox (a pure-Rust protobuf compiler),
//! so building needs no system `protoc`. The file descriptor set is written to
//! OUT_DIR for server reflection (the error details' types come from
//! `tonic_types::pb::FILE_DESCRIPTOR_SET` at run time).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/plylog/v1/game.proto",
        "proto/plylog/v1/game_service.proto",
    ];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    println!("cargo:rerun-if-changed=migrations");
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    let descriptors = protox::compile(files, ["proto"])?;
    std::fs::write(
        out_dir.join("plylog_descriptor.bin"),
        prost::Message::encode_to_vec(&descriptors),
    )?;
    tonic_prost_build::configure()
        .codec_path("crate::api::codec::Codec")
        // Written by hand so a server can send stored events as they are
        // (src/proto/replay.rs); the same message on the wire.
        .extern_path(
            ".plylog.v1.GetReplayResponse",
            "crate::proto::replay::GetReplayResponse",
        )
        // Written by hand so a server can send an event as the bytes it
        // already holds, once for all followers (src/proto/stream.rs).
        .extern_path(
            ".plylog.v1.StreamEventsResponse",
            "crate::proto::stream::StreamEventsResponse",
        )
        // Maps (labels) as BTreeMap: encoded in key order, so one request
        // always encodes to the same bytes (its idempotency fingerprint).
        .btree_map(".")
        .build_client(true)
        .build_server(true)
        .compile_fds(descriptors)?;
    Ok(())
}
