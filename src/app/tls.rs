//! TLS: the rustls acceptor for a PEM certificate chain and key, offering
//! HTTP/2 by ALPN (the connections themselves are [`crate::transport`]'s).

use std::path::PathBuf;
use std::sync::Arc;

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::{AppError, TlsFiles};

/// A TLS acceptor for the PEM certificate chain and key in `files`,
/// offering HTTP/2 by ALPN.
///
/// # Errors
/// [`AppError::TlsFile`] when a file cannot be read;
/// [`AppError::TlsIdentity`] when the files hold no certificate or key, or
/// the key is not the certificate's.
pub(super) fn tls_acceptor(files: &TlsFiles) -> Result<TlsAcceptor, AppError> {
    let read = |what, path: &PathBuf| {
        std::fs::read(path).map_err(|source| AppError::TlsFile {
            what,
            path: path.clone(),
            source,
        })
    };
    let identity = |why: String| AppError::TlsIdentity {
        cert: files.cert.clone(),
        key: files.key.clone(),
        why,
    };
    let cert_pem = read("certificate", &files.cert)?;
    let key_pem = read("key", &files.key)?;
    let certs = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| identity(format!("reading the certificate: {e}")))?;
    if certs.is_empty() {
        return Err(identity("no certificate in the certificate file".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| identity(format!("reading the key: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| identity(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| identity(format!("{e:?}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
