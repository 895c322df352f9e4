//! Seat tokens: derived from a server secret, stored only as hashes.
//!
//! A seat's token is `plylog_seat_` followed by the hex of
//! HMAC-SHA256(secret, `"plylog seat token v1" 0x00 game_id 0x00 seat
//! generation`), where `seat` is the 0-based seat index as 4 big-endian
//! bytes and `generation` the sequence of the event that issued the token
//! as 8 big-endian bytes (1, GameCreated, for the tokens CreateGame issues;
//! a SeatTokenReissued event's sequence for a re-issued one). HMAC is RFC
//! 2104, SHA-256 FIPS 180-4.
//!
//! Because a token can be derived again from the secret, a retried
//! CreateGame (or ReissueSeatToken) returns the same, usable tokens as the
//! call whose reply was lost, while the store keeps only their SHA-256
//! hashes: a copy of the database alone mints nothing. Every node of a
//! deployment reads the same secret file.
//!
//! The secret file holds one secret per line (at least 32 characters, e.g.
//! `openssl rand -hex 32`); blank lines and lines starting with `#` are
//! skipped. The first secret derives new tokens; the others are older ones
//! kept during a rotation, so a retry of a call made before the rotation
//! still finds its tokens. Tokens already issued keep working whatever the
//! file holds, since moves are checked against the stored hashes.

use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::store::TokenHash;

/// The prefix of every seat token, so a leaked one is recognisable.
pub const SEAT_TOKEN_PREFIX: &str = "plylog_seat_";

/// Fewest characters a secret may have.
pub const MIN_SECRET_CHARS: usize = 32;

/// The domain separator of the derivation, versioned.
const DERIVATION_LABEL: &[u8] = b"plylog seat token v1";

/// The SHA-256 hash of a token (or an API key): all a store keeps of it.
pub fn hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// Why the secret file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    /// The file could not be read or created.
    #[error("seat token secret file {path} cannot be read or created")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file holds no secret, or one that is too short.
    #[error("seat token secret file {path}: {why}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, e.g. "line 2: a secret needs at least 32 characters".
        why: String,
    },
    /// Seat tokens are on with PostgreSQL, and no secret file was given.
    #[error(
        "with PostgreSQL every node must derive seat tokens from the same secret: pass --seat-token-secret-file <path> (the same file on every node), or --no-seat-tokens"
    )]
    Required,
}

/// The secrets seat tokens are derived from: the current one first, then
/// older ones kept during a rotation.
#[derive(Clone)]
pub struct SeatTokenKeys {
    secrets: Vec<Vec<u8>>,
}

impl std::fmt::Debug for SeatTokenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets themselves.
        f.debug_struct("SeatTokenKeys")
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

impl SeatTokenKeys {
    /// Keys from secrets, the current one first.
    ///
    /// # Panics
    /// When `secrets` is empty.
    pub fn from_secrets(secrets: Vec<Vec<u8>>) -> Self {
        assert!(!secrets.is_empty(), "at least one secret");
        SeatTokenKeys { secrets }
    }

    /// A fresh random secret held only in memory (for a database that does
    /// not outlive the process).
    pub fn ephemeral() -> Self {
        SeatTokenKeys::from_secrets(vec![random_secret().into_bytes()])
    }

    /// Reads the secret file at `path` (format in the module docs).
    ///
    /// # Errors
    /// [`SecretFileError`]: the file cannot be read, holds no secret, or a
    /// secret shorter than [`MIN_SECRET_CHARS`].
    pub fn read(path: &Path) -> Result<Self, SecretFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| SecretFileError::Io {
            path: path.to_owned(),
            source,
        })?;
        let invalid = |why: String| SecretFileError::Invalid {
            path: path.to_owned(),
            why,
        };
        let mut secrets = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.chars().count() < MIN_SECRET_CHARS {
                return Err(invalid(format!(
                    "line {}: a secret needs at least {MIN_SECRET_CHARS} characters",
                    number + 1
                )));
            }
            secrets.push(line.as_bytes().to_vec());
        }
        if secrets.is_empty() {
            return Err(invalid("it holds no secret".into()));
        }
        Ok(SeatTokenKeys { secrets })
    }

    /// Reads the secret file at `path`, first creating it (readable by its
    /// owner only) with a fresh random secret when it does not exist.
    ///
    /// # Errors
    /// As [`SeatTokenKeys::read`], and a file that cannot be created.
    pub fn read_or_create(path: &Path) -> Result<Self, SecretFileError> {
        if !path.exists() {
            let io = |source| SecretFileError::Io {
                path: path.to_owned(),
                source,
            };
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(path) {
                Ok(mut file) => {
                    let text = format!(
                        "# plylog seat token secret, created {}. Every node must read the same\n\
                         # file. To rotate: put a new secret on the first line and keep this one\n\
                         # below it while CreateGame retries from before may still arrive.\n{}\n",
                        path.display(),
                        random_secret()
                    );
                    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(io)?;
                    file.sync_all().map_err(io)?;
                }
                // Another process created it first: read theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(e)),
            }
        }
        SeatTokenKeys::read(path)
    }

    /// The token of `seat` in `game_id` issued by the event at sequence
    /// `generation`, derived from the current secret.
    pub fn issue(&self, game_id: &str, seat: u32, generation: u64) -> String {
        derive(&self.secrets[0], game_id, seat, generation)
    }

    /// The token of `seat` in `game_id` issued at `generation` whose hash is
    /// `hash`, derived from whichever secret made it; `None` when no secret
    /// held gives it (the seat's token was re-issued since, or the secret
    /// that made it has been retired).
    pub fn recover(
        &self,
        game_id: &str,
        seat: u32,
        generation: u64,
        expected: &TokenHash,
    ) -> Option<String> {
        self.secrets
            .iter()
            .map(|secret| derive(secret, game_id, seat, generation))
            .find(|token| hash(token) == *expected)
    }
}

/// 32 random bytes from the operating system, hex-encoded.
fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex(&bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn derive(secret: &[u8], game_id: &str, seat: u32, generation: u64) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(DERIVATION_LABEL);
    mac.update(&[0]);
    mac.update(game_id.as_bytes());
    mac.update(&[0]);
    mac.update(&seat.to_be_bytes());
    mac.update(&generation.to_be_bytes());
    format!("{SEAT_TOKEN_PREFIX}{}", hex(&mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(secrets: &[&str]) -> SeatTokenKeys {
        SeatTokenKeys::from_secrets(secrets.iter().map(|s| s.as_bytes().to_vec()).collect())
    }

    #[test]
    fn a_token_is_the_same_for_the_same_secret_game_seat_and_generation_only() {
        let a = keys(&["a".repeat(32).as_str()]);
        let token = a.issue("g", 0, 1);
        assert!(
            token.starts_with(SEAT_TOKEN_PREFIX) && token.len() == SEAT_TOKEN_PREFIX.len() + 64
        );
        assert_eq!(token, a.issue("g", 0, 1));
        for other in [a.issue("g", 1, 1), a.issue("g", 0, 2), a.issue("h", 0, 1)] {
            assert_ne!(token, other);
        }
        assert_ne!(token, keys(&["b".repeat(32).as_str()]).issue("g", 0, 1));
    }

    #[test]
    fn hmac_sha256_matches_rfc_4231_test_case_2() {
        // Key "Jefe", data "what do ya want for nothing?".
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn after_a_rotation_a_token_is_recovered_from_the_older_secret() {
        let old = keys(&["o".repeat(32).as_str()]);
        let token = old.issue("g", 1, 1);
        let rotated = keys(&["n".repeat(32).as_str(), "o".repeat(32).as_str()]);
        assert_ne!(rotated.issue("g", 1, 1), token);
        assert_eq!(
            rotated.recover("g", 1, 1, &hash(&token)),
            Some(token.clone())
        );
        let retired = keys(&["n".repeat(32).as_str()]);
        assert_eq!(retired.recover("g", 1, 1, &hash(&token)), None);
    }

    #[test]
    fn the_secret_file_is_created_once_and_refused_when_short_or_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        let first = SeatTokenKeys::read_or_create(&path).unwrap();
        let again = SeatTokenKeys::read_or_create(&path).unwrap();
        assert_eq!(first.issue("g", 0, 1), again.issue("g", 0, 1));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&path, "# only a comment\n\n").unwrap();
        assert!(
            SeatTokenKeys::read(&path)
                .unwrap_err()
                .to_string()
                .contains("no secret")
        );
        std::fs::write(&path, "short\n").unwrap();
        assert!(
            SeatTokenKeys::read(&path)
                .unwrap_err()
                .to_string()
                .contains("line 1")
        );
    }
}
