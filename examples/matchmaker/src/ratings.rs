//! Glicko-2 (Mark Glickman, "Example of the Glicko-2 system", 2012:
//! <http://www.glicko.net/glicko/glicko2.pdf>), computed by the
//! `skillratings` crate. Each finished game is its own rating period for
//! its two players, rated as soon as the game ends.

use skillratings::Outcomes;
use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2};

/// A player's rating: Glicko-2's rating, deviation and volatility.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rating {
    /// The rating, 1500 for a new player.
    pub(crate) rating: f64,
    /// The rating deviation, 350 for a new player.
    pub(crate) deviation: f64,
    /// The volatility, 0.06 for a new player.
    pub(crate) volatility: f64,
}

impl Default for Rating {
    fn default() -> Self {
        Glicko2Rating::new().into()
    }
}

impl From<Glicko2Rating> for Rating {
    fn from(r: Glicko2Rating) -> Self {
        Rating {
            rating: r.rating,
            deviation: r.deviation,
            volatility: r.volatility,
        }
    }
}

impl From<Rating> for Glicko2Rating {
    fn from(r: Rating) -> Self {
        Glicko2Rating {
            rating: r.rating,
            deviation: r.deviation,
            volatility: r.volatility,
        }
    }
}

/// How a game ended for its first player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Result {
    /// The first player won.
    FirstWon,
    /// The second player won.
    SecondWon,
    /// A draw.
    Draw,
}

/// The two players' ratings after a game between them ended with
/// `result`, Glickman's system constant tau at 0.5.
pub(crate) fn rate(first: Rating, second: Rating, result: Result) -> (Rating, Rating) {
    let outcome = match result {
        Result::FirstWon => Outcomes::WIN,
        Result::SecondWon => Outcomes::LOSS,
        Result::Draw => Outcomes::DRAW,
    };
    let (a, b) = glicko2(
        &first.into(),
        &second.into(),
        &outcome,
        &Glicko2Config::new(),
    );
    (a.into(), b.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillratings::glicko2::glicko2_rating_period;

    /// Glickman's worked example (section "Example calculation"): a player
    /// rated 1500, deviation 200, volatility 0.06 plays three games in a
    /// period, against 1400/30 (won), 1550/100 (lost) and 1700/300
    /// (lost), tau 0.5: afterwards 1464.06, deviation 151.52, volatility
    /// 0.05999.
    #[test]
    fn glickmans_worked_example_is_reproduced() {
        let player = Glicko2Rating {
            rating: 1500.0,
            deviation: 200.0,
            volatility: 0.06,
        };
        let opponent = |rating, deviation| Glicko2Rating {
            rating,
            deviation,
            volatility: 0.06,
        };
        let config = Glicko2Config {
            tau: 0.5,
            ..Glicko2Config::new()
        };
        let after = glicko2_rating_period(
            &player,
            &[
                (opponent(1400.0, 30.0), Outcomes::WIN),
                (opponent(1550.0, 100.0), Outcomes::LOSS),
                (opponent(1700.0, 300.0), Outcomes::LOSS),
            ],
            &config,
        );
        // The paper rounds its intermediate values (mu' to -0.2069, then
        // 173.7178 x mu' + 1500 = 1464.06); computed unrounded the rating
        // is 1464.0507: within a hundredth of the published figure.
        println!("{after:?}");
        assert!((after.rating - 1464.06).abs() < 0.01, "{}", after.rating);
        assert!(
            (after.deviation - 151.52).abs() < 0.01,
            "{}",
            after.deviation
        );
        assert!(
            (after.volatility - 0.05999).abs() < 0.000_01,
            "{}",
            after.volatility
        );
        // The same config is what `rate` uses.
        assert_eq!(Glicko2Config::new().tau, config.tau);
    }

    #[test]
    fn a_win_moves_the_ratings_apart_and_a_draw_between_equals_moves_neither() {
        let (winner, loser) = rate(Rating::default(), Rating::default(), Result::FirstWon);
        assert!(winner.rating > 1500.0 && loser.rating < 1500.0);
        assert!((winner.rating - 1500.0 - (1500.0 - loser.rating)).abs() < 1e-9);
        let (a, b) = rate(Rating::default(), Rating::default(), Result::Draw);
        assert!((a.rating - 1500.0).abs() < 1e-9 && (b.rating - 1500.0).abs() < 1e-9);
        assert!(a.deviation < 350.0);
    }
}
