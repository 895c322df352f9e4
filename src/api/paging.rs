//! Paging as AIP-158 reads it: page sizes, and the page tokens the server
//! issues and reads back.

use super::pb;
use crate::proto::convert::FieldError;

/// A page size as AIP-158 reads it: 0 is `default`, a size over `max` is
/// clamped to `max`, a negative one is INVALID_ARGUMENT.
pub(super) fn page_size(requested: i32, default: usize, max: usize) -> Result<usize, FieldError> {
    match usize::try_from(requested) {
        Ok(0) => Ok(default),
        Ok(n) => Ok(n.min(max)),
        Err(_) => Err(FieldError::invalid(
            "page_size",
            format!("page_size must not be negative (0 means {default}; at most {max})"),
        )),
    }
}

/// INVALID_ARGUMENT / INVALID_PAGE_TOKEN.
pub(super) fn invalid_page_token() -> FieldError {
    FieldError::new(
        "page_token",
        "page_token was not issued by this server",
        pb::ErrorReason::InvalidPageToken,
    )
}

/// Page tokens are the server's own decimal numbers, separated by dots:
/// `<cursor>` for ListGames (`<cursor>.1` newest first), `<sequence>` for
/// GetReplay, `<sequence>.<offset>` for ListLegalMoves. Parses a token of `N` numbers; an empty token is the
/// first page (`None`).
pub(super) fn page_token<const N: usize>(token: &str) -> Result<Option<[u64; N]>, FieldError> {
    if token.is_empty() {
        return Ok(None);
    }
    let bad = invalid_page_token;
    let mut numbers = [0; N];
    let mut parts = token.split('.');
    for slot in &mut numbers {
        let part = parts.next().ok_or_else(bad)?;
        let n: u64 = part.parse().map_err(|_| bad())?;
        // Only the canonical spelling the server writes ("3", never "+3" or "03").
        if n.to_string() != part || n > i64::MAX as u64 {
            return Err(bad());
        }
        *slot = n;
    }
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok(Some(numbers))
}
