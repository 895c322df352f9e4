use std::path::PathBuf;
use std::time::Duration;

use plylog::api::auth::AccessSettings;
use plylog::app::{Application, Settings, TlsFiles};
use plylog::proto::game_service_client::GameServiceClient;
use tonic::transport::{Certificate, Channel, ClientTlsConfig};
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use plylog_testkit::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tls")
        .join(name)
}

/// Server settings on `db` serving TLS with fixture files `cert` and `key`.
fn with_tls(db: &TestDatabase, cert: &str, key: &str) -> Settings {
    Settings {
        postgres_connections: 8,
        registry: settings(),
        shutdown_grace: Duration::from_secs(1),
        access: AccessSettings::default(),
        max_in_flight: 64,
        tls: Some(TlsFiles {
            cert: fixture(cert),
            key: fixture(key),
        }),
        ..Settings::new("127.0.0.1:0".parse().unwrap(), db.url.clone())
    }
}

#[tokio::test]
async fn with_a_certificate_and_key_the_server_speaks_tls_only() {
    let db = TestDatabase::fresh().await;
    let settings = with_tls(&db, "server.crt", "server.key");
    let server = spawn_app(settings).await;
    let port = server.addr.port();

    let ca = Certificate::from_pem(std::fs::read(fixture("ca.crt")).unwrap());
    let tls = ClientTlsConfig::new()
        .ca_certificate(ca)
        .domain_name("localhost");
    let secure = Channel::from_shared(format!("https://127.0.0.1:{port}"))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect()
        .await
        .expect("a TLS connection");
    let health = HealthClient::new(secure.clone())
        .check(HealthCheckRequest {
            service: "plylog.v1.GameService".into(),
        })
        .await
        .expect("health over TLS");
    assert_eq!(health.into_inner().status, 1);
    let mut client = GameServiceClient::new(secure);
    create(&mut client, "over-tls", mnk(3, 3, 3)).await;

    // A plaintext client gets nowhere.
    let plain = Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(2))
        .connect_lazy();
    assert!(
        GameServiceClient::new(plain)
            .list_games(plylog::proto::ListGamesRequest::default())
            .await
            .is_err()
    );

    server.stop().await;
}

#[tokio::test]
async fn a_key_that_is_not_the_certificates_is_refused_before_serving() {
    let db = TestDatabase::fresh().await;
    let settings = with_tls(&db, "ca.crt", "server.key");
    let error = Application::build(settings)
        .await
        .err()
        .expect("a mismatched pair is refused");
    assert!(error.to_string().contains("KeyMismatch"), "{error}");
}
