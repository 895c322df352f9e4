//! ListGames' `filter`: the subset of AIP-160 (<https://google.aip.dev/160>)
//! the game list is indexed for, read into a [`ListFilter`].
//!
//! The grammar is parsed by the `aip-160` crate; this module accepts only
//! restrictions joined by `AND`, each on a field the store has an index
//! for (see `ListGamesRequest.filter` in the proto for the list), and says
//! which part of the filter it refuses and why.

use std::collections::HashSet;
use std::str::FromStr;

use aip_160::{Arg, Comparator, Expression, Restriction, Value};

use super::pb;
use crate::metrics::KINDS;
use crate::proto::convert::FieldError;
use crate::proto::convert::{MAX_LABELS, label_key_problem};
use crate::store::{GameTag, ListFilter};

/// Most characters in a filter.
pub(super) const MAX_FILTER_CHARS: usize = 4096;

/// INVALID_ARGUMENT / INVALID_REQUEST naming `filter`.
fn invalid(why: impl Into<String>) -> FieldError {
    FieldError::invalid("filter", why)
}

/// The [`ListFilter`] `text` spells (empty: every game).
///
/// # Errors
/// [`FieldError`] naming `filter` (INVALID_REQUEST): text over
/// [`MAX_FILTER_CHARS`] characters, text that is not AIP-160, or a filter
/// outside the subset: anything but restrictions joined by `AND`, a field
/// or comparator not listed, a value that does not read as its field's,
/// a field restricted twice (labels: a key twice, or more than
/// [`MAX_LABELS`]).
pub(super) fn list_filter(text: &str) -> Result<ListFilter, FieldError> {
    if text.chars().count() > MAX_FILTER_CHARS {
        return Err(invalid(format!(
            "the filter is over {MAX_FILTER_CHARS} characters"
        )));
    }
    let parsed = aip_160::parse_filter(text).map_err(|e| invalid(e.to_string()))?;
    let restrictions = match &parsed.expression {
        None => return Ok(ListFilter::default()),
        Some(Expression::Restriction(one)) => vec![one],
        Some(Expression::And(all)) => all
            .iter()
            .map(|each| match each {
                Expression::Restriction(one) => Ok(one),
                _ => Err(only_and()),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(only_and()),
    };
    let mut filter = ListFilter::default();
    let mut seen = HashSet::new();
    let mut labels = 0;
    for restriction in restrictions {
        let field = restriction
            .comparable
            .field_path()
            .ok_or_else(|| invalid("a restriction must name a field, such as status"))?;
        if !seen.insert(field.clone()) {
            return Err(invalid(format!("{field} is restricted twice")));
        }
        match field.as_str() {
            "status" => {
                equal(restriction, &field)?;
                filter.status = Some(status(text_of(restriction, &field)?)?);
            }
            "kind" => {
                equal(restriction, &field)?;
                let kind = text_of(restriction, &field)?;
                if !KINDS.contains(&kind) {
                    return Err(invalid(format!(
                        "kind {kind:?} is none of {}",
                        KINDS.join(", ")
                    )));
                }
                filter.tags.push(GameTag::Kind(kind.to_owned()));
            }
            // A repeated field: `:` (has) is AIP-160's spelling, `=` reads
            // the same here.
            "seats.player_id" => {
                if !matches!(restriction.comparator, Comparator::Equal | Comparator::Has) {
                    return Err(invalid("seats.player_id takes = or :"));
                }
                let player_id = text_of(restriction, &field)?;
                filter.tags.push(GameTag::Player(player_id.to_owned()));
            }
            "created_at" | "updated_at" => {
                let from = lower_bound_ms(restriction, &field)?;
                if field == "created_at" {
                    filter.created_from_ms = Some(from);
                } else {
                    filter.updated_from_ms = Some(from);
                }
            }
            _ => match field.strip_prefix("labels.") {
                Some(key) => {
                    if let Some(problem) = label_key_problem(key) {
                        return Err(invalid(problem));
                    }
                    equal(restriction, &field)?;
                    labels += 1;
                    if labels > MAX_LABELS {
                        return Err(invalid(format!(
                            "more than {MAX_LABELS} label restrictions"
                        )));
                    }
                    let value = text_of(restriction, &field)?;
                    filter
                        .tags
                        .push(GameTag::Label(key.to_owned(), value.to_owned()));
                }
                None => {
                    return Err(invalid(format!(
                        "{field} cannot be filtered on: status, kind, seats.player_id, \
                         labels.<key>, created_at and updated_at can"
                    )));
                }
            },
        }
    }
    Ok(filter)
}

/// The tags a StreamAllEvents `filter` asks for: ListGames' language on
/// the fields fixed at a game's creation (kind, players, labels).
///
/// # Errors
/// As [`list_filter`], and [`FieldError`] naming `filter` for a status or
/// time restriction.
pub(super) fn game_filter(text: &str) -> Result<Vec<GameTag>, FieldError> {
    let filter = list_filter(text)?;
    if filter.status.is_some()
        || filter.created_from_ms.is_some()
        || filter.updated_from_ms.is_some()
    {
        return Err(invalid(
            "the feed filters on what is fixed at creation: kind, seats.player_id and \
             labels.<key>",
        ));
    }
    Ok(filter.tags)
}

/// The error for anything but restrictions joined by AND.
fn only_and() -> FieldError {
    invalid("only restrictions joined by AND are supported (no OR, NOT or bare words)")
}

/// Refuses a comparator other than `=`.
fn equal(restriction: &Restriction, field: &str) -> Result<(), FieldError> {
    match restriction.comparator {
        Comparator::Equal => Ok(()),
        _ => Err(invalid(format!("{field} takes ="))),
    }
}

/// The restriction's value: a quoted string, or unquoted text (a status
/// name); never a wildcard, a field path or an expression.
fn text_of<'r>(restriction: &'r Restriction, field: &str) -> Result<&'r str, FieldError> {
    let value = match restriction.arg.as_value() {
        Some(Value::String(text)) => {
            if text.starts_with('*') || text.ends_with('*') {
                return Err(invalid(format!(
                    "{field}: wildcards are not supported (the value must match exactly)"
                )));
            }
            text
        }
        Some(Value::Text(text)) => text,
        None => return Err(invalid(format!("{field} must be compared with a value"))),
    };
    if matches!(restriction.arg, Arg::Composite(_)) {
        return Err(invalid(format!("{field} must be compared with a value")));
    }
    Ok(value)
}

/// A status by its GameStatus name, with or without `GAME_STATUS_`.
fn status(name: &str) -> Result<i32, FieldError> {
    let full = if name.starts_with("GAME_STATUS_") {
        name.to_owned()
    } else {
        format!("GAME_STATUS_{name}")
    };
    match pb::GameStatus::from_str_name(&full) {
        Some(pb::GameStatus::Unspecified) | None => Err(invalid(format!(
            "status {name:?} is none of IN_PROGRESS, WON, DRAWN, NO_RESULT"
        ))),
        Some(status) => Ok(status as i32),
    }
}

/// The first Unix epoch millisecond a `created_at`/`updated_at`
/// restriction (`>` or `>=` an RFC 3339 time) lets through: times are
/// stored to the millisecond, so `> T` starts at the first millisecond
/// after T, `>= T` at the first at or after it.
fn lower_bound_ms(restriction: &Restriction, field: &str) -> Result<i64, FieldError> {
    let inclusive = match restriction.comparator {
        Comparator::GreaterThan => false,
        Comparator::GreaterThanOrEqual => true,
        _ => return Err(invalid(format!("{field} takes > or >="))),
    };
    let text = text_of(restriction, field)?;
    let at = prost_types::Timestamp::from_str(text).map_err(|_| {
        invalid(format!(
            "{field}: {text:?} is not an RFC 3339 time such as \"2026-12-06T10:00:00Z\""
        ))
    })?;
    let ms = at.seconds.saturating_mul(1000) + i64::from(at.nanos / 1_000_000);
    let exact = at.nanos % 1_000_000 == 0;
    Ok(if inclusive && exact { ms } else { ms + 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> ListFilter {
        list_filter(text).unwrap_or_else(|e| panic!("{text:?}: {}", e.why))
    }

    fn refused(text: &str) -> String {
        list_filter(text).unwrap_err().why
    }

    #[test]
    fn every_supported_restriction_reads_into_the_filter() {
        assert_eq!(read(""), ListFilter::default());
        assert_eq!(read("   "), ListFilter::default());
        let filter = read(
            "status = IN_PROGRESS AND kind = \"connect_four\" AND seats.player_id = \"alice\" \
             AND labels.tournament = \"spring cup\" AND labels.round = \"2\" \
             AND created_at >= \"2026-12-06T10:00:00Z\" AND updated_at > \"2026-12-06T10:00:00.5Z\"",
        );
        assert_eq!(
            filter,
            ListFilter {
                status: Some(pb::GameStatus::InProgress as i32),
                tags: vec![
                    GameTag::Kind("connect_four".into()),
                    GameTag::Player("alice".into()),
                    GameTag::Label("tournament".into(), "spring cup".into()),
                    GameTag::Label("round".into(), "2".into()),
                ],
                created_from_ms: Some(1_796_551_200_000),
                updated_from_ms: Some(1_796_551_200_501),
            }
        );
        assert_eq!(read("status = GAME_STATUS_WON").status, Some(2));
        assert_eq!(read("status = \"DRAWN\"").status, Some(3));
        assert_eq!(
            read("seats.player_id:\"bob\"").tags,
            [GameTag::Player("bob".into())]
        );
        // > a whole millisecond starts at the next one.
        assert_eq!(
            read("created_at > \"2026-12-06T10:00:00Z\"").created_from_ms,
            Some(1_796_551_200_001)
        );
        // An escaped quote in a value.
        assert_eq!(
            read(r#"labels.team = "the \"best\" team""#).tags,
            [GameTag::Label("team".into(), "the \"best\" team".into())]
        );
    }

    #[test]
    fn anything_outside_the_subset_is_refused_with_the_reason() {
        assert!(refused("status = ").contains("invalid filter"));
        assert!(refused("status = WON OR status = DRAWN").contains("only restrictions"));
        assert!(refused("NOT status = WON").contains("only restrictions"));
        assert!(refused("alice").contains("only restrictions"));
        assert!(refused("status = WON status = DRAWN").contains("only restrictions"));
        assert!(refused("status = PAUSED").contains("none of IN_PROGRESS"));
        assert!(refused("status = UNSPECIFIED").contains("none of"));
        assert!(refused("status != WON").contains("status takes ="));
        assert!(refused("status = WON AND status = DRAWN").contains("restricted twice"));
        assert!(refused("kind = \"go\"").contains("none of mnk"));
        assert!(refused("game_id = \"x\"").contains("cannot be filtered on"));
        assert!(refused("labels.Team = \"x\"").contains("label key"));
        assert!(refused("labels.team = \"x*\"").contains("wildcards"));
        assert!(refused("seats.player_id > \"a\"").contains("= or :"));
        assert!(refused("created_at < \"2026-12-06T10:00:00Z\"").contains("> or >="));
        assert!(refused("created_at > \"yesterday\"").contains("RFC 3339"));
        assert!(refused("kind = (a = b)").contains("compared with a value"));
        let many: Vec<String> = (0..17).map(|i| format!("labels.k{i} = \"v\"")).collect();
        assert!(refused(&many.join(" AND ")).contains("more than 16"));
        assert!(refused(&"a".repeat(MAX_FILTER_CHARS + 1)).contains("over 4096"));
    }
}
