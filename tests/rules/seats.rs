//! Seat validation at game creation ([`plylog::game::GameConfig::new`]),
//! checked on a tic-tac-toe table.

use plylog::game::{GameConfig, InvalidSeats, SeatInfo, SeatLimits};

use crate::seat;
use plylog::rules::{MnkRules, RuleSet};

fn config(seats: Vec<SeatInfo>) -> Result<GameConfig, InvalidSeats> {
    GameConfig::new(
        RuleSet::Mnk(MnkRules::TIC_TAC_TOE),
        seats,
        SeatLimits::default(),
    )
}

#[test]
fn fewer_than_two_seats_are_refused() {
    assert_eq!(
        config(vec![seat("a", "X")]).unwrap_err().why,
        "a game needs at least 2 seats, got 1"
    );
}

#[test]
fn duplicate_symbols_are_refused_naming_the_second_seat() {
    let err = config(vec![seat("a", "X"), seat("b", "O"), seat("c", "X")]).unwrap_err();
    assert_eq!(err.field, "seats[2].symbol");
    assert_eq!(err.why, "symbol \"X\" draws like seat 0's \"X\"");
    // The same drawing, spelled differently, is the same symbol.
    // Default-ignorable characters the old hand-made list missed: the
    // shorthand format controls and musical formatting controls.
    for (a, b) in [
        ("\u{E9}", "e\u{301}"),
        ("X", "X\u{200B}"),
        ("X", "X\u{1D173}"),
        ("X", "X\u{1D17A}"),
        ("X", "\u{1BCA0}X"),
        ("X", "X\u{1BCA3}"),
    ] {
        let err = config(vec![seat("a", a), seat("b", b)]).unwrap_err();
        assert_eq!(err.field, "seats[1].symbol", "{a:?} {b:?}");
    }
}

#[test]
fn empty_ids_and_bad_symbols_are_refused() {
    assert_eq!(
        config(vec![seat("", "X"), seat("b", "O")])
            .unwrap_err()
            .field,
        "seats[0].player_id"
    );
    assert_eq!(
        config(vec![seat("a", "X X"), seat("b", "O")])
            .unwrap_err()
            .field,
        "seats[0].symbol"
    );
    assert_eq!(
        config(vec![seat("a", "X"), seat("b", "")])
            .unwrap_err()
            .field,
        "seats[1].symbol"
    );
    assert!(config(vec![seat("a", "X"), seat("b", "O"), seat("c", "△")]).is_ok());
    for bad in [
        ".",
        "\u{200B}",
        "\u{0}",
        "\u{FEFF}\u{200D}",
        ".\u{200B}",
        "\u{2800}",
        "\u{3164}",
        "\u{301}",
        "\u{E0041}",
        "\u{1BCA1}",
        "\u{1D173}\u{1D17A}",
    ] {
        let err = config(vec![seat("a", "X"), seat("b", bad)]).unwrap_err();
        assert_eq!(err.field, "seats[1].symbol", "{bad:?}");
    }
    assert!(config(vec![seat("a", "❤\u{FE0F}"), seat("b", "O")]).is_ok());
}
