//! The feed's last events in memory: what the SQLite writer committed most
//! recently, so that a feed reader keeping up reads them here instead of
//! querying the file for each group commit.
//!
//! The writer keeps it only while a feed reader is subscribed (see
//! [`super::writer::run`]), and adds a group's events after the group
//! commits and before it publishes the feed's new last position: a reader
//! that was told of a position finds it here or, once it has left the
//! tail (or when the tail was reset), in the file. The tail holds each
//! position at most once, in order, with no gap: a reader reads a range
//! from here only when every position of it is here.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use crate::store::{FeedEvent, FeedRange};

/// Most events the tail holds: at about 100 bytes an event, under 1 MB.
pub(super) const CAPACITY: usize = 8_192;

/// The feed's most recent events, each at its position.
#[derive(Debug)]
pub(super) struct FeedTail {
    inner: Mutex<Tail>,
    capacity: usize,
}

#[derive(Debug)]
struct Tail {
    /// The position of `events[0]` (of the next event, when empty).
    first: u64,
    events: VecDeque<FeedEvent>,
}

impl FeedTail {
    /// An empty tail of at most `capacity` events, whose next event is at
    /// `head + 1`.
    pub(super) fn new(head: u64, capacity: usize) -> Self {
        FeedTail {
            inner: Mutex::new(Tail {
                first: head + 1,
                events: VecDeque::new(),
            }),
            capacity,
        }
    }

    /// Forgets every event: the next is at `head + 1`.
    pub(super) fn reset(&self, head: u64) {
        let mut tail = self.lock();
        tail.events.clear();
        tail.first = head + 1;
    }

    /// Adds `events`, committed at positions `first_position` on in order,
    /// dropping the oldest beyond the capacity. Events that do not follow
    /// the tail's last position replace the tail.
    pub(super) fn extend(&self, first_position: u64, events: Vec<FeedEvent>) {
        let mut tail = self.lock();
        if first_position != tail.first + tail.events.len() as u64 {
            tail.events.clear();
            tail.first = first_position;
        }
        tail.events.extend(events);
        let excess = tail.events.len().saturating_sub(self.capacity);
        tail.events.drain(..excess);
        tail.first += excess as u64;
    }

    /// The events of `range` as [`crate::store::EventStore::read_feed`]
    /// gives them, or `None` when the tail does not hold every position of
    /// it or the range filters on tags (which the tail does not know).
    pub(super) fn read(&self, range: &FeedRange<'_>) -> Option<Vec<FeedEvent>> {
        if !range.tags.is_empty() {
            return None;
        }
        if range.upto <= range.after {
            return Some(Vec::new());
        }
        let tail = self.lock();
        // `first` is at least 1: `last` is at least 0.
        let last = tail.first + tail.events.len() as u64 - 1;
        if range.after + 1 < tail.first || range.upto > last {
            return None;
        }
        // first <= after + 1 <= upto <= last.
        let from = usize::try_from(range.after + 1 - tail.first).ok()?;
        let to = usize::try_from(range.upto + 1 - tail.first).ok()?;
        Some(
            tail.events
                .range(from..to)
                .filter(|event| !range.lifecycle_only || event.lifecycle > 0)
                .filter(|event| {
                    range
                        .event_types
                        .is_none_or(|types| types.contains(&event.event_type.as_str()))
                })
                .take(range.limit as usize)
                .cloned()
                .collect(),
        )
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tail> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(position: u64, event_type: &str, lifecycle: i32) -> FeedEvent {
        FeedEvent {
            position,
            game_id: format!("game-{}", position % 3),
            sequence: position,
            event_type: event_type.to_owned(),
            payload: bytes::Bytes::from(position.to_le_bytes().to_vec()),
            lifecycle,
            created_payload: None,
        }
    }

    fn range(after: u64, upto: u64) -> FeedRange<'static> {
        FeedRange {
            after,
            upto,
            event_types: None,
            lifecycle_only: false,
            tags: &[],
            limit: 128,
        }
    }

    fn positions(events: Option<Vec<FeedEvent>>) -> Option<Vec<u64>> {
        events.map(|events| events.iter().map(|e| e.position).collect())
    }

    #[test]
    fn a_range_is_read_only_when_the_tail_holds_all_of_it() {
        let tail = FeedTail::new(10, 5);
        assert_eq!(positions(tail.read(&range(10, 10))), Some(vec![]));
        assert_eq!(positions(tail.read(&range(10, 11))), None, "not yet");
        tail.extend(11, (11..=13).map(|p| event(p, "move_played", 0)).collect());
        assert_eq!(positions(tail.read(&range(10, 13))), Some(vec![11, 12, 13]));
        assert_eq!(positions(tail.read(&range(11, 12))), Some(vec![12]));
        assert_eq!(positions(tail.read(&range(9, 13))), None, "10 is not here");
        assert_eq!(positions(tail.read(&range(12, 14))), None, "14 is not here");
        // Past the capacity the oldest go: 11 and 12.
        tail.extend(14, (14..=17).map(|p| event(p, "move_played", 0)).collect());
        assert_eq!(positions(tail.read(&range(10, 17))), None);
        assert_eq!(
            positions(tail.read(&range(12, 17))),
            Some(vec![13, 14, 15, 16, 17])
        );
        // Events that do not follow replace the tail.
        tail.extend(20, vec![event(20, "move_played", 0)]);
        assert_eq!(positions(tail.read(&range(17, 20))), None);
        assert_eq!(positions(tail.read(&range(19, 20))), Some(vec![20]));
        tail.reset(30);
        assert_eq!(positions(tail.read(&range(19, 20))), None);
        assert_eq!(positions(tail.read(&range(30, 30))), Some(vec![]));
    }

    #[test]
    fn a_read_filters_and_limits_as_the_store_does() {
        let tail = FeedTail::new(0, 100);
        tail.extend(
            1,
            vec![
                event(1, "game_created", 1),
                event(2, "move_played", 0),
                event(3, "move_played", 4),
                event(4, "undone", 5),
                event(5, "move_played", 0),
            ],
        );
        let lifecycle = FeedRange {
            lifecycle_only: true,
            ..range(0, 5)
        };
        assert_eq!(positions(tail.read(&lifecycle)), Some(vec![1, 3, 4]));
        let moves = FeedRange {
            event_types: Some(&["move_played"]),
            limit: 2,
            ..range(1, 5)
        };
        assert_eq!(positions(tail.read(&moves)), Some(vec![2, 3]));
        let tagged = FeedRange {
            tags: &[crate::store::GameTag::Kind("connect_four".to_owned())],
            ..range(0, 5)
        };
        assert_eq!(positions(tail.read(&tagged)), None);
    }
}
