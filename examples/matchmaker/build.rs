//! Compiles plylog's protos (../../proto) into a gRPC client, as any
//! service calling plylog would.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "../../proto/plylog/v1/game.proto",
        "../../proto/plylog/v1/game_service.proto",
    ];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    let descriptors = protox::compile(files, ["../../proto"])?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_client(true)
        .compile_fds(descriptors)?;
    Ok(())
}
