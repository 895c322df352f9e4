//! Credentials: seat tokens and the optional server API key.
//!
//! CreateGame issues one random seat token per seat (32 bytes from the
//! operating system's generator, hex-encoded behind a `plylog_seat_` prefix)
//! and returns them once; the store keeps only their SHA-256 hashes.
//! SubmitMove and Undo present a token as gRPC metadata
//! `authorization: Bearer <token>` (RFC 6750). The game's actor compares
//! hashes, so a token is checked without ever being stored.

use rand::RngCore;
use sha2::{Digest, Sha256};
use tonic::metadata::MetadataMap;

use crate::store::TokenHash;

/// The prefix of every seat token, so a leaked one is recognisable.
const SEAT_TOKEN_PREFIX: &str = "plylog_seat_";

/// Who may create games and whether games get seat tokens.
#[derive(Debug, Clone, Default)]
pub struct AccessSettings {
    /// Whether CreateGame issues seat tokens (so moves and undos must present
    /// them). Off only where plylog is reachable by a trusted backend alone.
    pub seat_tokens: bool,
    /// When set, CreateGame must present this key as `authorization: Bearer
    /// <key>`.
    pub api_key: Option<String>,
}

/// The SHA-256 hash of a token.
pub fn hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// New seat tokens for `seats` seats, with their hashes, in seat order.
pub fn issue(seats: usize) -> (Vec<String>, Vec<TokenHash>) {
    (0..seats)
        .map(|_| {
            let mut secret = [0u8; 32];
            rand::rng().fill_bytes(&mut secret);
            let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
            let token = format!("{SEAT_TOKEN_PREFIX}{hex}");
            let digest = hash(&token);
            (token, digest)
        })
        .unzip()
}

/// The bearer credential of a call: `None` without an `authorization`
/// header, otherwise what follows `Bearer ` (scheme case-insensitive). A
/// header of another form is treated as a wrong credential, not a missing
/// one.
pub fn bearer(metadata: &MetadataMap) -> Option<String> {
    let value = metadata.get("authorization")?;
    let text = value.to_str().unwrap_or_default().trim();
    Some(match text.split_once(' ') {
        Some((scheme, credential)) if scheme.eq_ignore_ascii_case("bearer") => {
            credential.trim().to_owned()
        }
        _ => String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_distinct_prefixed_and_hash_to_what_was_issued() {
        let (tokens, hashes) = issue(3);
        assert_eq!(tokens.len(), 3);
        assert!(
            tokens.iter().all(
                |t| t.starts_with(SEAT_TOKEN_PREFIX) && t.len() == SEAT_TOKEN_PREFIX.len() + 64
            )
        );
        assert_ne!(tokens[0], tokens[1]);
        assert_eq!(tokens.iter().map(|t| hash(t)).collect::<Vec<_>>(), hashes);
    }

    #[test]
    fn the_bearer_credential_is_read_from_the_authorization_header() {
        let mut metadata = MetadataMap::new();
        assert_eq!(bearer(&metadata), None);
        metadata.insert("authorization", "Bearer abc".parse().unwrap());
        assert_eq!(bearer(&metadata).as_deref(), Some("abc"));
        metadata.insert("authorization", "bearer  abc ".parse().unwrap());
        assert_eq!(bearer(&metadata).as_deref(), Some("abc"));
        metadata.insert("authorization", "Basic abc".parse().unwrap());
        assert_eq!(bearer(&metadata).as_deref(), Some(""));
    }
}
