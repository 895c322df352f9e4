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

#[test]
fn names_that_act_on_a_terminal_or_reorder_text_are_refused_naming_the_field() {
    let named = |player_id: &str, display_name: &str, symbol: &str| SeatInfo {
        player_id: player_id.into(),
        display_name: display_name.into(),
        symbol: symbol.into(),
        bot: None,
    };
    for bad in [
        "admin\u{202e}gnp.exe",
        "\u{1b}]0;title\u{7}",
        "bob\r",
        "a\nb",
        "del\u{7f}",
        "c1\u{9b}2J",
        "\u{2066}isolate",
        "mark\u{200f}",
        "\u{61c}x",
        "line\u{2028}break",
    ] {
        let err = config(vec![named(bad, "", "X"), named("b", "", "O")]).unwrap_err();
        assert_eq!(err.field, "seats[0].player_id", "{bad:?}");
        assert!(
            err.why.contains("\\u{"),
            "the character is named escaped: {err}"
        );
        let err = config(vec![named("a", "", "X"), named("b", bad, "O")]).unwrap_err();
        assert_eq!(err.field, "seats[1].display_name", "{bad:?}");
    }
    // A bidirectional override in a symbol draws nothing by itself but
    // reorders what follows it.
    let err = config(vec![named("a", "", "\u{202e}X"), named("b", "", "O")]).unwrap_err();
    assert_eq!(err.field, "seats[0].symbol");
    // Spaces, accents, right-to-left letters, emoji with joiners and
    // variation selectors are names like any other.
    assert!(
        config(vec![
            named("ada lovelace", "Ada Lovelace", "X"),
            named(
                "\u{5e9}\u{5dc}\u{5d5}\u{5dd}",
                "Zoë 👩\u{200d}💻 ❤\u{fe0f}",
                "O"
            ),
        ])
        .is_ok()
    );
    // A stored game is read back as it was created, whatever its names.
    let stored = SeatLimits {
        plain_text: false,
        ..SeatLimits::default()
    };
    assert!(
        GameConfig::new(
            RuleSet::Mnk(MnkRules::TIC_TAC_TOE),
            vec![
                named("admin\u{202e}gnp.exe", "\u{1b}[2J", "\u{202e}X"),
                named("b", "", "O"),
            ],
            stored,
        )
        .is_ok()
    );
}

#[test]
fn an_escaped_name_shows_each_disruptive_character_as_its_escape() {
    use plylog::game::escape_disruptive;
    assert_eq!(
        escape_disruptive("admin\u{202e}gnp.exe"),
        "admin\\u{202e}gnp.exe"
    );
    assert_eq!(
        escape_disruptive("\u{1b}]0;t\u{7}\r\n\u{9b}"),
        "\\u{1b}]0;t\\u{7}\\u{d}\\u{a}\\u{9b}"
    );
    assert_eq!(escape_disruptive("Zoë 👩\u{200d}💻"), "Zoë 👩\u{200d}💻");
}
