//! Board validation, each overshoot rule, jumps, extra turns and the dice.

use super::*;

fn options(squares: i64, jumps: &[(i64, i64)]) -> SnakesLaddersOptions {
    SnakesLaddersOptions {
        squares: Some(squares),
        jumps: jumps.to_vec(),
        ..SnakesLaddersOptions::default()
    }
}

fn rules(options: SnakesLaddersOptions) -> SnakesLaddersRules {
    SnakesLaddersRules::new(options, 1_000_000).unwrap()
}

fn refusal(options: SnakesLaddersOptions) -> (String, String) {
    let err = SnakesLaddersRules::new(options, 1_000_000).unwrap_err();
    (err.field.to_owned(), err.why)
}

/// A one-seat position with the token on `square`, then rolls on from there
/// until the dice satisfy `wanted`: each try uses the next roll number, so
/// the next stream of the generator.
fn roll_until(
    rules: &SnakesLaddersRules,
    square: u32,
    sixes: u32,
    wanted: impl Fn(&[u32]) -> bool,
) -> Played {
    let mut position = Race::new(1);
    for _ in 0..1000 {
        position.advance(Seat(0), square, sixes);
        let played = rules.roll(&position, Seat(0));
        if wanted(&played.roll.as_ref().unwrap().dice) {
            return played;
        }
    }
    panic!("no wanted roll in 1000 tries");
}

#[test]
fn each_bad_jump_is_refused_by_name() {
    let cases: [(&[(i64, i64)], &str); 7] = [
        (
            &[(5, 3), (0, 7)],
            "jumps[1] 0->7 goes outside squares 1 to 100",
        ),
        (&[(5, 101)], "jumps[0] 5->101 goes outside squares 1 to 100"),
        (&[(-4, 2)], "jumps[0] -4->2 goes outside squares 1 to 100"),
        (
            &[(100, 3)],
            "jumps[0] 100->3 starts on the last square (100), where the game ends",
        ),
        (&[(7, 7)], "jumps[0] 7->7 starts and ends on square 7"),
        (
            &[(7, 30), (9, 2), (7, 3)],
            "jumps[2] 7->3 starts on square 7, as jumps[0] 7->30 does",
        ),
        (
            &[(7, 30), (30, 45)],
            "jumps[0] 7->30 ends where jumps[1] 30->45 starts, and chaining is off",
        ),
    ];
    for (jumps, why) in cases {
        assert_eq!(
            refusal(options(100, jumps)),
            ("jumps".into(), why.into()),
            "{jumps:?}"
        );
    }
}

#[test]
fn chains_are_taken_with_chaining_on_and_cycles_refused() {
    let chained = SnakesLaddersOptions {
        chaining: true,
        ..options(100, &[(2, 10), (10, 20)])
    };
    let played = roll_until(&rules(chained.clone()), 0, 0, |d| d == [2]);
    let roll = played.roll.unwrap();
    assert_eq!((roll.jumps, roll.to), (vec![(2, 10), (10, 20)], 20));
    assert_eq!(played.placement, None, "a race has no cells");

    let cycle = SnakesLaddersOptions {
        jumps: vec![(5, 40), (40, 12), (12, 5)],
        ..chained
    };
    assert_eq!(
        refusal(cycle),
        (
            "jumps".into(),
            "jumps[0] 5->40 is part of a cycle of jumps 5->40->12->5".into()
        )
    );
}

#[test]
fn a_board_where_a_token_can_get_stuck_is_refused_naming_the_square() {
    // With a two-sided die, every roll from square 4 lands on a snake back
    // to 1, so square 10 can never be reached from 1 to 4.
    let stuck = SnakesLaddersOptions {
        sides: Some(2),
        ..options(10, &[(5, 1), (6, 1)])
    };
    assert_eq!(
        refusal(stuck),
        (
            "jumps".into(),
            "a token can come to rest on square 0, from which square 10 can never be reached"
                .into()
        )
    );
    // Exact landing with two dice: square 9 (one short) can never finish.
    let two_dice = SnakesLaddersOptions {
        dice: Some(2),
        ..options(20, &[])
    };
    assert_eq!(
        refusal(two_dice).1,
        "a token can come to rest on square 19, from which square 20 can never be reached"
    );
    // Bouncing back, the same board can always finish.
    assert!(
        SnakesLaddersRules::new(
            SnakesLaddersOptions {
                dice: Some(2),
                overshoot: Some(Overshoot::BounceBack),
                ..options(20, &[])
            },
            1_000_000
        )
        .is_ok()
    );
}

#[test]
fn bad_sizes_and_dice_are_refused_by_field() {
    let cases = [
        (options(1, &[]), "squares", "squares=1 must be 2 to 1000"),
        (
            options(5000, &[]),
            "squares",
            "squares=5000 must be 2 to 1000",
        ),
        (
            options(6, &[]),
            "squares",
            "squares=6 must be more than the highest roll of 1d6 (6)",
        ),
        (
            SnakesLaddersOptions {
                dice: Some(0),
                ..options(100, &[])
            },
            "dice",
            "dice=0 must be 1 to 10",
        ),
        (
            SnakesLaddersOptions {
                sides: Some(1),
                ..options(100, &[])
            },
            "sides",
            "sides=1 must be 2 to 100",
        ),
        (
            SnakesLaddersOptions {
                sides: Some(4),
                extra_turn_on_six: true,
                ..options(100, &[])
            },
            "extra_turn_on_six",
            "extra turns on a six need dice with at least 6 sides, not 4",
        ),
        (
            SnakesLaddersOptions {
                three_sixes_forfeit: true,
                ..options(100, &[])
            },
            "three_sixes_forfeit",
            "the three-sixes limit needs extra_turn_on_six",
        ),
    ];
    for (options, field, why) in cases {
        assert_eq!(refusal(options), (field.into(), why.into()));
    }
    assert_eq!(
        SnakesLaddersRules::new(options(100, &[]), 50)
            .unwrap_err()
            .why,
        "squares=100 must be 2 to 50"
    );
}

#[test]
fn exact_landing_forfeits_an_overshoot_and_lands_an_exact_roll() {
    let rules = rules(options(100, &[]));
    let over = roll_until(&rules, 98, 0, |d| d[0] > 2).roll.unwrap();
    assert_eq!(
        (over.from, over.to, over.passed.len(), over.forfeit),
        (98, 98, 0, Some(Forfeit::Overshoot))
    );
    let exact = roll_until(&rules, 98, 0, |d| d == [2]);
    assert_eq!(exact.roll.unwrap().passed, [99, 100]);
    assert_eq!(
        exact.outcome,
        Some(Outcome::Win {
            seat: Seat(0),
            line: Vec::new()
        })
    );
}

#[test]
fn bounce_back_walks_to_the_end_and_back_then_takes_a_jump() {
    let rules = rules(SnakesLaddersOptions {
        overshoot: Some(Overshoot::BounceBack),
        ..options(100, &[(97, 60)])
    });
    let played = roll_until(&rules, 98, 0, |d| d == [5]);
    let roll = played.roll.unwrap();
    assert_eq!(roll.passed, [99, 100, 99, 98, 97]);
    assert_eq!((roll.jumps, roll.to), (vec![(97, 60)], 60));
    assert_eq!(played.outcome, None);
}

#[test]
fn reach_or_pass_wins_past_the_end() {
    let rules = rules(SnakesLaddersOptions {
        overshoot: Some(Overshoot::ReachOrPass),
        ..options(100, &[])
    });
    let played = roll_until(&rules, 97, 0, |d| d[0] == 6);
    assert_eq!(played.roll.unwrap().passed, [98, 99, 100]);
    assert!(played.outcome.is_some());
}

#[test]
fn a_six_gives_another_roll_and_the_third_in_a_row_is_forfeited() {
    let sixes = SnakesLaddersOptions {
        extra_turn_on_six: true,
        three_sixes_forfeit: true,
        ..options(100, &[])
    };
    let rules = rules(sixes);
    let first = roll_until(&rules, 10, 0, |d| d == [6]).roll.unwrap();
    assert_eq!(
        (first.to, first.extra_turn, first.sixes_before),
        (16, true, 0)
    );
    let other = roll_until(&rules, 10, 1, |d| d != [6]).roll.unwrap();
    assert!(!other.extra_turn);
    let third = roll_until(&rules, 10, 2, |d| d == [6]).roll.unwrap();
    assert_eq!(
        (third.to, third.extra_turn, third.forfeit),
        (10, false, Some(Forfeit::ThirdSix))
    );
}

#[test]
fn the_same_seed_and_roll_number_give_the_same_dice() {
    let three_dice = |seed| {
        rules(SnakesLaddersOptions {
            dice: Some(3),
            overshoot: Some(Overshoot::ReachOrPass),
            seed,
            ..options(100, &[])
        })
    };
    let (a, b) = (three_dice(7), three_dice(8));
    let draws: Vec<Vec<u32>> = (0..20).map(|r| a.draw(r)).collect();
    assert_eq!(draws, (0..20).map(|r| a.draw(r)).collect::<Vec<_>>());
    assert_ne!(draws, (0..20).map(|r| b.draw(r)).collect::<Vec<_>>());
    assert!(draws.iter().flatten().all(|d| (1..=6).contains(d)));
}

#[test]
fn the_dice_are_uniform_by_a_chi_square_test() {
    let rules = rules(SnakesLaddersOptions {
        seed: 2026,
        ..options(100, &[])
    });
    let rolls = 60_000;
    let mut counts = [0u32; 6];
    for r in 0..rolls {
        counts[rules.draw(r)[0] as usize - 1] += 1;
    }
    let expected = rolls as f64 / 6.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (f64::from(c) - expected).powi(2) / expected)
        .sum();
    // 20.52 is the 0.999 quantile of chi-square with 5 degrees of freedom.
    assert!(chi2 < 20.52, "chi2 = {chi2}, counts {counts:?}");
}

#[test]
fn the_shortest_game_is_found_by_search() {
    assert_eq!(rules(options(100, &[])).shortest_game(), Some(17));
    // A ladder from 1 to 99, then exactly 1 more.
    assert_eq!(rules(options(100, &[(1, 99)])).shortest_game(), Some(2));
}

#[test]
fn only_rolls_are_moves() {
    let rules = rules(options(100, &[]));
    assert_eq!(rules.check(Move::Roll), Ok(()));
    assert!(matches!(
        rules.check(Move::Drop { column: 0 }),
        Err(IllegalMove::WrongMoveKind { .. })
    ));
}
