//! Pairing: who plays whom among the players waiting. Players are taken in
//! rating order and paired with their neighbour when the two ratings are
//! within a window that widens the longer either has waited, so a
//! waiting player is eventually matched however far its rating is from
//! the others'.

/// A player waiting for a game.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Waiting {
    /// The player's id.
    pub(crate) player_id: String,
    /// Its Glicko-2 rating.
    pub(crate) rating: f64,
    /// How long it has waited, in milliseconds.
    pub(crate) waited_ms: u64,
}

/// The rating difference two players may have when neither has waited.
pub(crate) const BASE_WINDOW: f64 = 100.0;
/// How much the window widens per second the longer waiter has waited.
pub(crate) const WIDENING_PER_SECOND: f64 = 50.0;

/// The rating difference allowed between two players, the longer wait of
/// the two being `waited_ms`.
pub(crate) fn window(waited_ms: u64) -> f64 {
    BASE_WINDOW + WIDENING_PER_SECOND * waited_ms as f64 / 1000.0
}

/// The pairs to create from `waiting` (each player in at most one), by
/// player id; the players left wait on.
pub(crate) fn pair(mut waiting: Vec<Waiting>) -> Vec<(String, String)> {
    waiting.sort_by(|a, b| {
        a.rating
            .total_cmp(&b.rating)
            .then_with(|| a.player_id.cmp(&b.player_id))
    });
    let mut pairs = Vec::new();
    let mut players = waiting.into_iter().peekable();
    while let Some(first) = players.next() {
        let Some(second) = players.peek() else { break };
        let allowed = window(first.waited_ms.max(second.waited_ms));
        if second.rating - first.rating <= allowed {
            let second = players.next().expect("peeked");
            pairs.push((first.player_id, second.player_id));
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(id: &str, rating: f64, waited_ms: u64) -> Waiting {
        Waiting {
            player_id: id.into(),
            rating,
            waited_ms,
        }
    }

    #[test]
    fn neighbours_in_rating_are_paired_and_a_distant_player_waits_until_the_window_reaches_it() {
        let players = vec![
            waiting("a", 1500.0, 0),
            waiting("far", 1900.0, 0),
            waiting("b", 1550.0, 0),
            waiting("c", 1450.0, 0),
        ];
        assert_eq!(pair(players), [("c".to_owned(), "a".to_owned())]);
        let players = vec![waiting("b", 1550.0, 0), waiting("far", 1900.0, 0)];
        assert!(pair(players).is_empty());
        // 350 apart: a window of 100 + 50 per second reaches it at 5 s.
        let players = vec![waiting("b", 1550.0, 4_999), waiting("far", 1900.0, 0)];
        assert!(pair(players).is_empty());
        let players = vec![waiting("b", 1550.0, 5_000), waiting("far", 1900.0, 0)];
        assert_eq!(pair(players), [("b".to_owned(), "far".to_owned())]);
    }
}
