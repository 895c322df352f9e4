//! Paging as AIP-158 reads it: page sizes, and the page tokens the server
//! issues and reads back.

use super::pb;
use crate::proto::convert::FieldError;
use crate::store::ListFilter;

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

/// ListGames' page token: one cursor per cell, in cell order, separated by
/// `~` (one cell: just `<cursor>`), then `.1` when newest first, then
/// `_<8 hex digits>` naming the filter when there is one (see
/// [`filter_mark`]); as [`cell_cursors`] reads it. `cursors` has one entry
/// per cell.
pub(super) fn cell_cursors_token(
    cursors: &[i64],
    newest_first: bool,
    filter: &ListFilter,
) -> String {
    let cells: Vec<String> = cursors.iter().map(i64::to_string).collect();
    let mut token = cells.join("~");
    if newest_first {
        token.push_str(".1");
    }
    if let Some(mark) = filter_mark(filter) {
        token.push('_');
        token.push_str(&mark);
    }
    token
}

/// What a page token carries of the filter it pages through: the first
/// 4 bytes of the SHA-256 of the filter's parsed form, in hex, so that a
/// token is refused with another filter (AIP-158); `None` for no filter.
fn filter_mark(filter: &ListFilter) -> Option<String> {
    use sha2::{Digest, Sha256};
    use std::fmt::Write;
    if filter.is_empty() {
        return None;
    }
    let digest = Sha256::digest(format!("{filter:?}").as_bytes());
    Some(digest[..4].iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    }))
}

/// The cursors (one per cell of `cells`; all 0 for an empty token) of a
/// ListGames page token written by [`cell_cursors_token`] for the same
/// order, filter and cell count.
pub(super) fn cell_cursors(
    token: &str,
    cells: usize,
    newest_first: bool,
    filter: &ListFilter,
) -> Result<Vec<i64>, FieldError> {
    if token.is_empty() {
        return Ok(vec![0; cells]);
    }
    let token = match filter_mark(filter) {
        Some(mark) => token
            .strip_suffix(mark.as_str())
            .and_then(|rest| rest.strip_suffix('_'))
            .ok_or_else(invalid_page_token)?,
        None => token,
    };
    let cursors = if newest_first {
        token.strip_suffix(".1").ok_or_else(invalid_page_token)?
    } else {
        token
    };
    let parsed: Vec<i64> = cursors
        .split('~')
        .map(|part| page_token::<1>(part).map(|n| n.map(|[n]| n as i64)))
        .collect::<Result<Option<Vec<i64>>, _>>()?
        .ok_or_else(invalid_page_token)?;
    if parsed.len() != cells {
        return Err(invalid_page_token());
    }
    Ok(parsed)
}

/// Page tokens are the server's own decimal numbers, separated by dots:
/// `<cursor>` for ListGames (`<cursor>.1` newest first; with several
/// cells, see [`cell_cursors_token`]), `<sequence>` for
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
