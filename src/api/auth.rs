//! Credentials at the edge: the `authorization` metadata, and who may create
//! games and re-issue seat tokens.
//!
//! SubmitMove and Undo present a seat token as gRPC metadata
//! `authorization: Bearer <token>` (RFC 6750); CreateGame and
//! ReissueSeatToken present the server's API key the same way. Seat tokens
//! are derived and hashed by [`crate::tokens`]; the game's actor compares
//! hashes, so a token is checked without ever being stored.

use std::path::PathBuf;

use tonic::metadata::MetadataMap;

use crate::registry::Credential;
use crate::store::Database;
pub use crate::tokens::hash;
use crate::tokens::{SeatTokenKeys, SecretFileError};

/// Who may create games and whether games get seat tokens.
#[derive(Debug, Clone, Default)]
pub struct AccessSettings {
    /// Whether CreateGame issues seat tokens (so moves and undos must present
    /// them). Off only where plylog is reachable by a trusted backend alone.
    pub seat_tokens: bool,
    /// When set, CreateGame and ReissueSeatToken must present this key as
    /// `authorization: Bearer <key>`.
    pub api_key: Option<String>,
    /// The file of secrets seat tokens are derived from (see
    /// [`crate::tokens`]); every node of a deployment needs the same one.
    /// `None`: with SQLite, `<database file>.seat-token-secret`, created if
    /// missing; with PostgreSQL, required while seat tokens are on.
    pub seat_token_secret_file: Option<PathBuf>,
}

/// What is wrong with an `authorization` header that is present.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MalformedAuthorization {
    /// The value is not visible ASCII.
    #[error("the authorization metadata is not readable text")]
    Unreadable,
    /// A credential without a scheme, e.g. a bare token.
    #[error(
        "the authorization metadata must be \"Bearer <{0}>\"; it has no scheme (add \"Bearer \")"
    )]
    NoScheme(&'static str),
    /// Another scheme, e.g. `Basic`.
    #[error(
        "the authorization metadata must be \"Bearer <{expected}>\", not a {scheme:?} credential"
    )]
    OtherScheme {
        /// What the credential should be, e.g. "seat token".
        expected: &'static str,
        /// The scheme sent.
        scheme: String,
    },
    /// `Bearer` with nothing after it.
    #[error("the authorization metadata says \"Bearer\" but holds no {0}")]
    Empty(&'static str),
}

/// The bearer credential of a call: `Ok(None)` without an `authorization`
/// header, `Ok(Some(credential))` for `Bearer <credential>` (scheme
/// case-insensitive), and what is wrong with any other header. `expected`
/// names the credential in messages ("seat token", "API key").
///
/// # Errors
/// [`MalformedAuthorization`] for a header that is present but not a bearer
/// credential.
pub fn bearer(
    metadata: &MetadataMap,
    expected: &'static str,
) -> Result<Option<String>, MalformedAuthorization> {
    let Some(value) = metadata.get("authorization") else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .map_err(|_| MalformedAuthorization::Unreadable)?
        .trim();
    match text.split_once(' ') {
        Some((scheme, credential)) if scheme.eq_ignore_ascii_case("bearer") => {
            match credential.trim() {
                "" => Err(MalformedAuthorization::Empty(expected)),
                credential => Ok(Some(credential.to_owned())),
            }
        }
        Some((scheme, _)) => Err(MalformedAuthorization::OtherScheme {
            expected,
            scheme: scheme.to_owned(),
        }),
        None if text.eq_ignore_ascii_case("bearer") => Err(MalformedAuthorization::Empty(expected)),
        None => Err(MalformedAuthorization::NoScheme(expected)),
    }
}

/// The seat credential a call presents: none, a token (by its hash), or a
/// header that is not a bearer token (refused only by games that need one).
pub fn seat_credential(metadata: &MetadataMap) -> Credential {
    match bearer(metadata, "seat token") {
        Ok(None) => Credential::None,
        Ok(Some(token)) => Credential::Token(hash(&token)),
        Err(malformed) => Credential::Malformed(malformed.to_string()),
    }
}

/// The secrets seat tokens are derived from: the configured file; without
/// one, with SQLite, `<database file>.seat-token-secret` (created if missing;
/// an in-memory database gets a secret that lives as long as it does); with
/// PostgreSQL none, which is an error while new games get seat tokens.
/// `None` when games get no seat tokens.
///
/// # Errors
/// [`SecretFileError`] when the file cannot be read (or created) or holds
/// no usable secret, or ([`SecretFileError::Required`]) none is given with
/// PostgreSQL while new games get seat tokens.
pub fn seat_token_keys(
    access: &AccessSettings,
    database: &Database,
) -> Result<Option<SeatTokenKeys>, SecretFileError> {
    if let Some(path) = &access.seat_token_secret_file {
        return Ok(Some(SeatTokenKeys::read(path)?));
    }
    if let Database::Postgres(_) = database {
        return if access.seat_tokens {
            Err(SecretFileError::Required)
        } else {
            Ok(None)
        };
    }
    let Some(file) = database.sqlite_file() else {
        return Ok(Some(SeatTokenKeys::ephemeral()));
    };
    let mut path = file.into_os_string();
    path.push(".seat-token-secret");
    Ok(Some(SeatTokenKeys::read_or_create(&PathBuf::from(path))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(value: &str) -> MetadataMap {
        let mut metadata = MetadataMap::new();
        metadata.insert("authorization", value.parse().unwrap());
        metadata
    }

    #[test]
    fn the_bearer_credential_is_read_from_the_authorization_header() {
        assert_eq!(bearer(&MetadataMap::new(), "seat token"), Ok(None));
        for value in ["Bearer abc", "bearer  abc "] {
            assert_eq!(bearer(&header(value), "seat token"), Ok(Some("abc".into())));
        }
    }

    #[test]
    fn a_header_that_is_not_a_bearer_credential_says_what_is_wrong() {
        let why = |value| {
            bearer(&header(value), "seat token")
                .unwrap_err()
                .to_string()
        };
        assert!(why("plylog_seat_00").contains("no scheme (add \"Bearer \")"));
        assert!(why("Basic abc").contains("not a \"Basic\" credential"));
        assert!(why("Bearer").contains("holds no seat token"));
        assert!(why("Bearer   ").contains("holds no seat token"));
    }
}
