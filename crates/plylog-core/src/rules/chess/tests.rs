//! The FIDE rules this file's game decides by itself, each on a position
//! chosen to show it (the move generator's counts are checked by perft and
//! the whole against python-chess in `tests/rules/chess.rs`).

use super::*;

fn game(fen: &str) -> ChessGame {
    ChessGame::from_fen(ChessVariant::Standard, fen).expect("a valid FEN")
}

fn play(game: &mut ChessGame, moves: &str) {
    for text in moves.split_whitespace() {
        let mv = game.parse_move(text).expect(text);
        game.play(mv).expect(text);
    }
}

#[test]
fn a_start_given_as_a_fen_counts_toward_a_repetition() {
    // lichess #7009: the first position was not counted.
    let start = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    let mut g = game(start);
    play(&mut g, "Ng1 Nb8 Nf3 Nc6");
    assert_eq!(g.repetitions(), 2);
    assert_eq!(g.claimable_draw(), None);
    play(&mut g, "Ng1 Nb8 Nf3");
    // Black claims by announcing Nc6, before playing it (9.2.1.1).
    let nc6 = g.parse_san("Nc6").expect("legal");
    assert_eq!(g.claimable_draw(), None);
    assert_eq!(
        g.claimable_draw_with(nc6),
        Some(DrawClaim::ThreefoldRepetition)
    );
    assert!(g.can_claim_threefold_repetition());
    let na6 = g.parse_san("Na6").expect("legal");
    assert_eq!(g.claimable_draw_with(na6), None);
    g.play(nc6).expect("legal");
    assert_eq!(g.repetitions(), 3);
    assert_eq!(g.claimable_draw(), Some(DrawClaim::ThreefoldRepetition));
    assert_eq!(g.ending(), None, "threefold is claimed, not automatic");
    play(&mut g, "Ng1 Nb8 Nf3 Nc6 Ng1 Nb8 Nf3");
    assert_eq!(g.ending(), None);
    play(&mut g, "Nc6");
    assert_eq!(g.repetitions(), 5);
    assert_eq!(g.ending(), Some(ChessEnding::FivefoldRepetition));
    assert!(matches!(
        g.play(g.parse_san("Ng1").expect("legal")),
        Err(ChessMoveError::Ended(ChessEnding::FivefoldRepetition))
    ));
}

#[test]
fn a_capture_or_pawn_move_ends_what_can_repeat() {
    let mut g = ChessGame::default();
    play(&mut g, "Nf3 Nf6 Ng1 Ng8");
    assert_eq!(g.repetitions(), 2);
    play(&mut g, "e4 e5 Nf3 Nf6 Ng1 Ng8");
    assert_eq!(g.repetitions(), 2, "the position after 1... e5, twice");
}

#[test]
fn seventy_five_moves_end_the_game_unless_the_last_move_mates() {
    // White to move, the clock at 149 halfmoves.
    let quiet = "7k/8/8/8/8/8/R7/K7 w - - 149 120";
    let mut g = game(quiet);
    assert_eq!(g.claimable_draw(), Some(DrawClaim::FiftyMoves));
    play(&mut g, "Rb2");
    assert_eq!(g.ending(), Some(ChessEnding::SeventyFiveMoves));
    // The same clock, and the 75th move mates: the mate stands.
    let mut g = game("7k/8/6K1/8/8/8/8/R7 w - - 149 120");
    play(&mut g, "Ra8#");
    assert_eq!(g.ending(), Some(ChessEnding::Checkmate));
    assert_eq!(g.claimable_draw(), None);
}

#[test]
fn fifty_moves_can_be_claimed_with_the_move_that_makes_them() {
    let mut g = game("7k/8/8/8/8/8/R6P/K7 w - - 99 80");
    assert_eq!(g.claimable_draw(), None);
    let rook = g.parse_san("Rb2").expect("legal");
    let pawn = g.parse_san("h3").expect("legal");
    assert_eq!(g.claimable_draw_with(rook), Some(DrawClaim::FiftyMoves));
    assert_eq!(g.claimable_draw_with(pawn), None, "a pawn move resets it");
    assert!(g.can_claim_fifty_moves());
    g.play(pawn).expect("legal");
    assert!(!g.can_claim_fifty_moves());
}

#[test]
fn insufficient_material_is_decided_as_python_chess_does() {
    let cases = [
        ("8/8/4k3/8/8/3K4/8/8 w - - 0 1", true),
        ("8/8/4k3/8/8/3K4/5N2/8 w - - 0 1", true),
        ("8/8/4k3/8/8/3K4/5B2/8 w - - 0 1", true),
        // Bishops on squares of one colour, on both sides.
        ("8/8/4kb2/8/8/3K4/5B2/8 w - - 0 1", true),
        ("8/8/4k1b1/8/8/3K4/5B2/8 w - - 0 1", false),
        // Two knights can mate with the other side's help.
        ("8/8/4k3/8/8/3K4/4NN2/8 w - - 0 1", false),
        // A knight against a rook: a selfmate is possible.
        ("8/8/4kr2/8/8/3K4/5N2/8 w - - 0 1", false),
        ("8/8/4k3/8/8/3K4/5P2/8 w - - 0 1", false),
    ];
    for (fen, insufficient) in cases {
        let g = game(fen);
        assert_eq!(g.insufficient_material(), insufficient, "{fen}");
        assert_eq!(
            g.ending() == Some(ChessEnding::InsufficientMaterial),
            insufficient,
            "{fen}"
        );
    }
}

#[test]
fn san_is_read_leniently_and_an_ambiguous_move_says_which_moves_it_fits() {
    let mut g = ChessGame::default();
    play(&mut g, "d4 d5 Nf3 Nf6 e3 e6");
    // Both knights reach d2.
    assert_eq!(
        g.parse_san("Nd2"),
        Err(SanError::Ambiguous {
            san: "Nd2".into(),
            candidates: vec!["b1d2".into(), "f3d2".into()]
        })
    );
    let nbd2 = g.parse_san("Nbd2").expect("legal");
    assert_eq!(g.san(nbd2), "Nbd2");
    assert_eq!(g.parse_san("N1d2"), Ok(nbd2));
    assert_eq!(g.parse_san("Ke3"), Err(SanError::Illegal("Ke3".into())));
    assert_eq!(g.parse_san("Zz9"), Err(SanError::NotSan("Zz9".into())));
    play(&mut g, "Bd3 Bd6 0-0");
    assert_eq!(g.piece_on("g1"), Some((Side::White, PieceKind::King)));
    // Promotion without '=' and with a check mark where none is given.
    let mut g = game("8/4P1k1/8/8/8/8/8/4K3 w - - 0 1");
    let queen = g.parse_san("e8Q+").expect("legal");
    assert_eq!(g.san(queen), "e8=Q");
    g.play(queen).expect("legal");
    assert_eq!(g.piece_on("e8"), Some((Side::White, PieceKind::Queen)));
}

#[test]
fn uci_castles_as_the_kings_two_squares_in_standard_chess_and_onto_the_rook_in_chess960() {
    let fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    let g = game(fen);
    let short = g.parse_uci("e1g1").expect("UCI");
    assert_eq!(g.parse_uci("e1h1"), Ok(short));
    assert_eq!(g.uci(short), "e1g1");
    assert_eq!(g.san(short), "O-O");
    let g = ChessGame::from_fen(ChessVariant::Chess960, fen).expect("valid");
    let short = g.parse_uci("e1h1").expect("UCI");
    assert_eq!(g.uci(short), "e1h1");
    assert_eq!(g.san(short), "O-O");
    assert_eq!(g.fen(), "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1");
    assert_eq!(
        ChessGame::chess960(518).expect("a start").fen(),
        ChessGame::from_fen(ChessVariant::Chess960, &ChessGame::default().fen())
            .expect("valid")
            .fen()
    );
    assert_eq!(
        ChessGame::chess960(960),
        Err(ChessSetupError::NoSuchStart(960))
    );
}

#[test]
fn the_fen_names_an_en_passant_square_only_when_a_pawn_can_take_there() {
    let mut g = ChessGame::default();
    assert_eq!(
        (g.variant(), g.pieces().len(), g.side_to_move()),
        (ChessVariant::Standard, 32, Side::White)
    );
    play(&mut g, "e4");
    assert_eq!(
        (g.halfmove_clock(), g.fullmove_number(), g.side_to_move()),
        (0, 1, Side::Black)
    );
    assert_eq!(
        g.fen(),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    );
    play(&mut g, "d5 e5 f5");
    assert_eq!(g.en_passant_square().as_deref(), Some("f6"));
    assert!(g.fen().contains(" f6 "), "{}", g.fen());
    let exf6 = g.parse_san("exf6").expect("en passant");
    g.play(exf6).expect("legal");
    assert_eq!(g.piece_on("f5"), None);
}

#[test]
fn refusals_say_what_is_wrong() {
    let g = ChessGame::default();
    let illegal = |uci: &str| match g.play_clone(uci) {
        Err(ChessMoveError::Illegal { why, .. }) => why,
        other => panic!("{uci}: {other:?}"),
    };
    assert!(illegal("e3e4").contains("no piece"));
    assert!(illegal("e7e5").contains("no piece"));
    assert!(illegal("e2e5").contains("cannot move there"));
    assert!(matches!(
        g.parse_uci("castle"),
        Err(ChessMoveError::NotUci(_))
    ));
    assert!(matches!(
        ChessGame::from_fen(ChessVariant::Standard, "8/8/8 w - -"),
        Err(ChessSetupError::Fen(_))
    ));
    // Fool's mate, given as the start: over before it begins.
    let mated = game("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
    assert_eq!(mated.ending(), Some(ChessEnding::Checkmate));
    assert!(matches!(
        mated.play_clone("e2e4"),
        Err(ChessMoveError::Ended(ChessEnding::Checkmate))
    ));
    // X-FEN castling with the rooks away from the corners: Chess960's.
    let xfen = "r1k1r2q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K1R2Q w KQkq - 0 1";
    assert_eq!(
        ChessGame::from_fen(ChessVariant::Standard, xfen),
        Err(ChessSetupError::Chess960Castling("EAea".into()))
    );
    let g = ChessGame::from_fen(ChessVariant::Chess960, xfen).expect("valid");
    assert_eq!(g.castling_rights(), "EAea");
    let short = g.parse_san("O-O").expect("legal");
    assert_eq!(g.uci(short), "c1e1");
    assert_eq!(g.parse_uci("c1e1"), Ok(short));
    assert!(matches!(
        g.parse_uci("e2e4k"),
        Err(ChessMoveError::NotUci(_))
    ));
}

impl ChessGame {
    /// Plays the UCI move `uci` on a copy.
    fn play_clone(&self, uci: &str) -> Result<ChessGame, ChessMoveError> {
        let mut game = self.clone();
        game.play(game.parse_uci(uci)?)?;
        Ok(game)
    }
}

#[test]
fn pgn_reads_variations_zeros_and_a_set_up_start_and_writes_the_export_format() {
    let text = "[Event \"?\"]\n[SetUp \"1\"]\n[FEN \"r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 12\"]\n\n\
                12... 0-0 (12... Kd7 { no }) 13. Rad1 $1 Rf2 ; a rest-of-line comment\n\
                14. Kxf2?? { oops } *\n";
    let games = pgn::parse(text).expect("reads");
    assert_eq!(games.len(), 1);
    let game = &games[0];
    let sans: Vec<&str> = game.moves.iter().map(|m| m.san.as_str()).collect();
    assert_eq!(sans, ["0-0", "Rad1", "Rf2", "Kxf2"]);
    assert_eq!(game.moves[1].nags, ["$1"]);
    assert_eq!(game.moves[3].suffix, "??");
    let (_, end) = game.replay().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(end.piece_on("g8"), Some((Side::Black, PieceKind::King)));
    // Ke2 is not legal: the rook on f2 holds the second rank.
    assert!(matches!(
        pgn::parse(&text.replace("14. Kxf2??", "14. Ke2")).expect("reads")[0].replay(),
        Err(pgn::PgnError::Move { ply: 4, .. })
    ));
    let written = pgn::write(game);
    assert!(
        written.starts_with("[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]"),
        "{written}"
    );
    assert!(
        written.contains("12... 0-0 13. Rad1 $1 Rf2 14. Kxf2?? { oops } *"),
        "{written}"
    );
    assert_eq!(pgn::parse(&written).expect("reads")[0].moves, game.moves);
    assert!(matches!(
        pgn::parse("[Event \"x\"\n1. e4 *"),
        Err(pgn::PgnError::Syntax { line: 1, .. })
    ));
    // Move numbers stuck to zero castling; a comment after a result and a
    // game with no result marker before the next game's tags; a `;`
    // comment inside a variation.
    let two = "[Event \"a\"]\n1. e4 e5 2. Nf3 Nf6 3. Bc4 Bc5 4.0-0 4...0-0 1-0\n{end}\n\n\
               [Event \"b\"]\n1. d4 (1. c4 ; see ) here\n) d5\n[Event \"c\"]\n1. c4 *\n";
    let games = pgn::parse(two).expect("reads");
    let sans = |g: &pgn::PgnGame| g.moves.iter().map(|m| m.san.clone()).collect::<Vec<_>>();
    assert_eq!(games.len(), 3);
    assert_eq!(sans(&games[0])[6..], ["0-0", "0-0"]);
    assert_eq!(
        (sans(&games[1]), games[1].result.as_str()),
        (vec!["d4".into(), "d5".into()], "*")
    );
    assert_eq!(sans(&games[2]), ["c4"]);
}

#[test]
fn a_recorded_move_replays_only_with_the_facts_the_rules_give_it() {
    use crate::rules::{Game, Move, Seat};
    let rules = ChessRules::standard();
    let position = rules.initial_position(2);
    let text = MoveText::new("e4").expect("short");
    let played = rules
        .play(&position, Seat(0), Move::ChessText(text))
        .expect("legal");
    assert_eq!(
        played.mv,
        Move::Chess(position.game().parse_uci("e2e4").unwrap())
    );
    assert_eq!(rules.check_played(&position, Seat(0), &played), Ok(()));
    // A stored capture, check or end the move did not make is refused.
    for forge in [
        |c: &mut ChessPlayed| c.check = true,
        |c: &mut ChessPlayed| c.captured = Some(PieceKind::Pawn),
        |c: &mut ChessPlayed| c.end = Some(crate::rules::EndReason::Resignation),
        |c: &mut ChessPlayed| c.san = "e2e4".into(),
    ] {
        let mut forged = played.clone();
        forge(forged.chess.as_deref_mut().expect("chess facts"));
        assert!(
            rules.check_played(&position, Seat(0), &forged).is_err(),
            "{forged:?}"
        );
    }
}
