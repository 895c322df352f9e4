//! Chess through the API: real games move by move in SAN, perft to depth
//! 2 through SubmitMove / ListLegalMoves / Undo, the endings and draw
//! claims, and every refusal with its reason.

use plylog::proto as pb;
use plylog::rules::chess::{ChessEnding, ChessGame, ChessSetupError, ChessVariant, Side, pgn};
use tonic::Code;

use plylog_testkit::*;

/// Chess rules on the wire: `fen` empty for the standard start.
fn chess(variant: pb::ChessVariant, fen: &str, draw_rule: pb::DrawRule) -> pb::RuleSet {
    rules(pb::rule_set::Kind::Chess(pb::ChessRules {
        variant: variant as i32,
        fen: fen.to_owned(),
        chess960_start: None,
        draw_rule: draw_rule as i32,
    }))
}

/// Standard chess from `fen` (empty: the standard start), draws claimed.
fn standard(fen: &str) -> pb::RuleSet {
    chess(pb::ChessVariant::Standard, fen, pb::DrawRule::Claimed)
}

/// A chess move as text, UCI or SAN.
fn text(mv: &str) -> pb::Move {
    pb::Move {
        kind: Some(pb::r#move::Kind::Chess(pb::ChessMove { text: mv.into() })),
    }
}

/// CreateGame of chess with undo by any seat.
fn create_chess(game_id: &str, rules: pb::RuleSet) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        undo_policy: pb::UndoPolicy::AnySeat as i32,
        ..create_request(game_id, rules)
    }
}

/// Undo for `seat`, the full view in the reply.
fn undo_request(game_id: &str, seat: u32) -> pb::UndoRequest {
    pb::UndoRequest {
        game_id: game_id.into(),
        seat: Some(seat),
        request_id: String::new(),
        expected_sequence: None,
        view: pb::GameView::Full as i32,
    }
}

/// The chess facts of the one MovePlayed of a reply.
fn played(reply: &pb::SubmitMoveResponse) -> &pb::MovePlayed {
    match reply.events.first().and_then(|e| e.kind.as_ref()) {
        Some(pb::game_event::Kind::MovePlayed(played)) => played,
        other => panic!("a move played, not {other:?}"),
    }
}

/// The chess position of a game.
fn chess_position(game: &pb::Game) -> &pb::ChessPosition {
    position(game).chess.as_ref().expect("a chess position")
}

/// Plays `moves` (UCI or SAN) from seat 0 alternately, returning the last
/// reply.
async fn play_text(c: &mut Client, game_id: &str, moves: &[&str]) -> pb::SubmitMoveResponse {
    let mut last = None;
    for (ply, mv) in moves.iter().enumerate() {
        let reply = play(c, game_id, (ply % 2) as u32, text(mv))
            .await
            .unwrap_or_else(|e| panic!("{mv} refused: {e:?}"));
        last = Some(reply);
    }
    last.expect("a move")
}

/// SubmitAction of `action` for `seat`: the game after it.
async fn act(
    c: &mut Client,
    game_id: &str,
    seat: u32,
    action: pb::Action,
) -> Result<pb::Game, tonic::Status> {
    c.submit_action(action_request(game_id, seat, action))
        .await
        .map(|r| r.into_inner().game.expect("a game"))
}

async fn claim_draw(c: &mut Client, game_id: &str, seat: u32) -> Result<pb::Game, tonic::Status> {
    act(c, game_id, seat, pb::Action::ClaimDraw).await
}

/// Every legal move of a game (at most 218 in chess: one page).
async fn legal_moves(c: &mut Client, game_id: &str) -> Vec<pb::Move> {
    let reply = c
        .list_legal_moves(pb::ListLegalMovesRequest {
            game_id: game_id.into(),
            page_size: 256,
            page_token: String::new(),
        })
        .await
        .expect("legal moves")
        .into_inner();
    assert_eq!(
        reply.total as usize,
        reply.moves.len(),
        "one page holds them"
    );
    reply.moves
}

/// The movetext of a PGN text: its lines after the tags, joined.
fn movetext(pgn: &str) -> String {
    pgn.lines()
        .filter(|line| !line.starts_with('['))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Ends a game of `plies` moves from the standard start with `result` as
/// players do off the board: the loser resigns, or the seat to move offers
/// a draw and the other accepts. `*` leaves it unfinished.
async fn finish_as(c: &mut Client, game_id: &str, result: &str, plies: usize) {
    let to_move = (plies % 2) as u32;
    let steps: &[(u32, pb::Action)] = match result {
        "1-0" => &[(1, pb::Action::Resign)],
        "0-1" => &[(0, pb::Action::Resign)],
        "1/2-1/2" => &[
            (to_move, pb::Action::OfferDraw),
            (1 - to_move, pb::Action::AcceptDraw),
        ],
        _ => &[],
    };
    for &(seat, action) in steps {
        act(c, game_id, seat, action)
            .await
            .unwrap_or_else(|e| panic!("{game_id}: {action:?} refused: {e:?}"));
    }
}

#[tokio::test]
async fn every_sample_game_is_played_move_by_move_in_san_and_ends_as_it_did() {
    let text_file = include_str!("../fixtures/chess/lichess_db_sample.pgn");
    let games = pgn::parse(text_file).expect("the sample reads");
    assert_eq!(games.len(), 438);
    let server = TestServer::start().await;
    // Four callers at once, each a share of the games.
    let mut callers = tokio::task::JoinSet::new();
    for share in 0..4 {
        let mut c = server.client.clone();
        let games = games.clone();
        callers.spawn(async move {
            let (mut plies, mut on_the_board) = (0, 0);
            for (at, game) in games.iter().enumerate().skip(share).step_by(4) {
                let site = game.tag("Site").unwrap_or("?").to_owned();
                let fen = game.tag("FEN").unwrap_or_default();
                let id = format!("lichess-{at}");
                c.create_game(create_chess(&id, standard(fen)))
                    .await
                    .unwrap_or_else(|e| panic!("game {at} ({site}) created: {e:?}"));
                let mut last = None;
                for (ply, mv) in game.moves.iter().enumerate() {
                    let reply = c
                        .submit_move(plain_move_request(&id, (ply % 2) as u32, text(&mv.san)))
                        .await
                        .unwrap_or_else(|e| {
                            panic!("game {at} ({site}) ply {ply} {}: {e:?}", mv.san)
                        })
                        .into_inner();
                    let facts = played(&reply).chess.as_ref().expect("chess facts");
                    assert_eq!(facts.san, mv.san, "game {at} ({site}) ply {ply}");
                    last = Some(reply);
                }
                plies += game.moves.len();
                // The end the rules give, in process, and the PGN's result.
                assert_eq!(fen, "", "the sample's games start from the standard start");
                let (_, end) = game.replay().expect("replays");
                let final_game = match last {
                    Some(reply) => reply.game.expect("a game"),
                    None => get_game(&mut c, &id).await,
                };
                let position = position(&final_game);
                match end.ending() {
                    Some(ending) => {
                        on_the_board += 1;
                        let (status, reason, result) = match (ending, end.side_to_move()) {
                            (ChessEnding::Checkmate, Side::White) => {
                                (pb::GameStatus::Won, pb::EndReason::Checkmate, "0-1")
                            }
                            (ChessEnding::Checkmate, Side::Black) => {
                                (pb::GameStatus::Won, pb::EndReason::Checkmate, "1-0")
                            }
                            (ChessEnding::Stalemate, _) => {
                                (pb::GameStatus::Drawn, pb::EndReason::Stalemate, "1/2-1/2")
                            }
                            (ChessEnding::InsufficientMaterial, _) => (
                                pb::GameStatus::Drawn,
                                pb::EndReason::InsufficientMaterial,
                                "1/2-1/2",
                            ),
                            (ChessEnding::FivefoldRepetition, _) => (
                                pb::GameStatus::Drawn,
                                pb::EndReason::FivefoldRepetition,
                                "1/2-1/2",
                            ),
                            (ChessEnding::SeventyFiveMoves, _) => (
                                pb::GameStatus::Drawn,
                                pb::EndReason::SeventyFiveMoves,
                                "1/2-1/2",
                            ),
                        };
                        assert_eq!(position.status(), status, "game {at} ({site})");
                        let outcome = position.outcome.as_ref().expect("an outcome");
                        assert_eq!(outcome.reason(), reason, "game {at} ({site})");
                        assert_eq!(game.result, result, "game {at} ({site})");
                    }
                    None => {
                        assert_eq!(
                            position.status(),
                            pb::GameStatus::InProgress,
                            "game {at} ({site}): the board did not end it"
                        );
                        // It ended off the board: a resignation, a draw
                        // agreed (or a flag, played here as a resignation).
                        finish_as(&mut c, &id, &game.result, game.moves.len()).await;
                    }
                }
                // Exported as PGN, the log gives back the movetext and
                // result (the file's comments, lichess's clocks, aside).
                let events = stored_events(&c, &id).await;
                let exported = plylog::ops::pgn::games_of(&id, &events)
                    .expect("a log")
                    .expect("chess");
                let [exported] = exported.as_slice() else {
                    panic!("one round")
                };
                let plain = pgn::PgnGame {
                    moves: game
                        .moves
                        .iter()
                        .map(|m| pgn::PgnMove {
                            san: m.san.clone(),
                            ..pgn::PgnMove::default()
                        })
                        .collect(),
                    ..game.clone()
                };
                assert_eq!(
                    movetext(&pgn::write(exported)),
                    movetext(&pgn::write(&plain)),
                    "game {at} ({site})"
                );
            }
            (plies, on_the_board)
        });
    }
    let (mut plies, mut on_the_board) = (0, 0);
    while let Some(share) = callers.join_next().await {
        let (p, b) = share.expect("a caller");
        plies += p;
        on_the_board += b;
    }
    assert_eq!(plies, 28_538);
    println!("438 games, {plies} plies through SubmitMove, {on_the_board} ended on the board");
}

#[tokio::test]
async fn perft_to_depth_two_through_the_api_matches_every_tricky_position() {
    let cases = perft_cases(include_str!("../fixtures/chess/tricky.perft"));
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let mut checked = 0;
    for (at, case) in cases.iter().enumerate() {
        // Positions with Chess960's castling are Chess960 games.
        let variant = match ChessGame::from_fen(ChessVariant::Standard, &case.fen) {
            Err(ChessSetupError::Chess960Castling(_)) => pb::ChessVariant::Chess960,
            _ => pb::ChessVariant::Standard,
        };
        let id = format!("perft-{at}");
        let created = c
            .create_game(create_chess(
                &id,
                chess(variant, &case.fen, pb::DrawRule::Claimed),
            ))
            .await;
        if UNREACHABLE.contains(&case.id.as_str()) {
            assert_rejected(created, Code::InvalidArgument, "INVALID_RULES");
            continue;
        }
        created.unwrap_or_else(|e| panic!("{} ({}): {e:?}", case.id, case.fen));
        let depth_one = legal_moves(c, &id).await;
        let mut leaves = 0;
        for mv in &depth_one {
            let reply = play(c, &id, 0, mv.clone()).await.expect("a legal move");
            let game = reply.game.expect("a game");
            leaves += match position(&game).outcome.as_ref().map(|o| o.reason()) {
                // The side to move has no move: no leaves.
                None | Some(pb::EndReason::Checkmate | pb::EndReason::Stalemate) => {
                    legal_moves(c, &id).await.len() as u64
                }
                // A draw by rule ends the game, where perft counts on.
                Some(_) => {
                    let fen = &chess_position(&game).fen;
                    let after = ChessGame::from_fen(ChessVariant::Chess960, fen).expect("a FEN");
                    after.legal_move_count() as u64
                }
            };
            c.undo(undo_request(&id, 0)).await.expect("undone");
        }
        let game = get_game(c, &id).await;
        assert_eq!(position(&game).ply, 0, "{}: every move undone", case.id);
        let start = ChessGame::from_fen(ChessVariant::Chess960, &case.fen).expect("a FEN");
        let expected = case
            .counts
            .iter()
            .find(|(depth, _)| *depth == 2)
            .map_or_else(|| start.perft(2), |(_, count)| *count);
        assert_eq!(leaves, expected, "{} ({})", case.id, case.fen);
        checked += 1;
    }
    assert_eq!(checked, cases.len() - UNREACHABLE.len());
    println!("{checked} tricky positions to depth 2 through the API: all agree");
}

#[tokio::test]
async fn a_game_from_a_fen_takes_uci_and_san_and_undo_restores_castling_en_passant_and_the_clock() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    // Both sides may castle; halfmove clock 7.
    let fen = "r3k2r/pppp1ppp/8/4p3/8/8/PPPPPPPP/R3K2R w KQkq - 7 12";
    create_from(c, create_chess("fen", standard(fen))).await;
    let before = chess_position(&get_game(c, "fen").await).clone();
    assert_eq!(before.fen, fen);
    assert_eq!(
        (
            before.castling_rights.as_str(),
            before.halfmove_clock,
            before.fullmove_number
        ),
        ("KQkq", 7, 12)
    );
    // White castles short in UCI; the event gives both forms.
    let reply = play(c, "fen", 0, text("e1g1")).await.unwrap();
    let facts = played(&reply).chess.clone().unwrap();
    assert_eq!((facts.uci.as_str(), facts.san.as_str()), ("e1g1", "O-O"));
    // Black's double step in SAN makes an en passant square only when a
    // capture there is legal: none here.
    let reply = play(c, "fen", 1, text("d5")).await.unwrap();
    let after = chess_position(reply.game.as_ref().unwrap()).clone();
    assert_eq!(after.castling_rights, "kq");
    assert_eq!(after.halfmove_clock, 0);
    assert_eq!(after.en_passant_square, "");
    // Undo twice: the FEN, castling rights and the clock come back.
    for seat in [1, 0] {
        c.undo(undo_request("fen", seat)).await.expect("undone");
    }
    assert_eq!(chess_position(&get_game(c, "fen").await), &before);
    // En passant: d4, (a6), d5, c5, dxc6: the square is given, then used.
    let reply = play_text(c, "fen", &["d4", "a6", "d5", "c7c5"]).await;
    assert_eq!(
        chess_position(reply.game.as_ref().unwrap()).en_passant_square,
        "c6"
    );
    let reply = play(c, "fen", 0, text("dxc6")).await.unwrap();
    let facts = played(&reply).chess.clone().unwrap();
    assert_eq!(
        (facts.uci.as_str(), facts.captured()),
        ("d5c6", pb::ChessPieceKind::Pawn)
    );
    // A restart replays the log to the same position.
    let expected = get_game(c, "fen").await;
    let mut server = server.restart().await;
    assert_eq!(
        chess_position(&get_game(&mut server.client, "fen").await),
        chess_position(&expected)
    );
}

#[tokio::test]
async fn checkmate_wins_and_threefold_repetition_is_claimed_or_automatic() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    // Fool's mate: seat 1 (Black) mates.
    create_from(c, create_chess("fool", standard(""))).await;
    let reply = play_text(c, "fool", &["f3", "e5", "g4", "Qh4#"]).await;
    let facts = played(&reply).chess.clone().unwrap();
    assert!(facts.check);
    let game = reply.game.unwrap();
    assert_eq!(position(&game).status(), pb::GameStatus::Won);
    let outcome = position(&game).outcome.clone().unwrap();
    assert_eq!(outcome.reason(), pb::EndReason::Checkmate);
    let Some(pb::outcome::Kind::Win(win)) = outcome.kind else {
        panic!("a win")
    };
    assert_eq!(win.seat, 1);
    let pgn_result = |events: &[pb::GameEvent]| {
        let games = plylog::ops::pgn::games_of("fool", events).unwrap().unwrap();
        games[0].result.clone()
    };
    assert_eq!(pgn_result(&stored_events(c, "fool").await), "0-1");
    // The mate taken back takes its result with it.
    c.undo(undo_request("fool", 1)).await.expect("undone");
    assert_eq!(pgn_result(&stored_events(c, "fool").await), "*");

    // The knights go out and back twice: the start stands a third time.
    let shuffle = ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"];
    create_from(c, create_chess("claimed", standard(""))).await;
    play_text(c, "claimed", &shuffle).await;
    // Before the third time, no claim.
    assert_rejected(
        claim_draw(c, "claimed", 1).await,
        Code::FailedPrecondition,
        "NO_DRAW_CLAIM",
    );
    let reply = play(c, "claimed", 1, text("g8")).await;
    assert_rejected(reply, Code::FailedPrecondition, "ILLEGAL_MOVE");
    let reply = play(c, "claimed", 1, text("Ng8")).await.unwrap();
    let game = reply.game.unwrap();
    assert_eq!(position(&game).status(), pb::GameStatus::InProgress);
    assert_eq!(
        chess_position(&game).claimable_draw(),
        pb::EndReason::ThreefoldRepetition
    );
    // Black, whose move repeated it, claims (FIDE 9.2.1.1).
    let game = claim_draw(c, "claimed", 1).await.unwrap();
    assert_eq!(position(&game).status(), pb::GameStatus::Drawn);
    assert_eq!(
        position(&game).outcome.as_ref().unwrap().reason(),
        pb::EndReason::ThreefoldRepetition
    );
    // A claimed draw stands, as an agreed one does.
    assert_rejected(
        c.undo(undo_request("claimed", 1)).await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );

    // With automatic draws the repeating move ends the game.
    create_from(
        c,
        create_chess(
            "automatic",
            chess(pb::ChessVariant::Standard, "", pb::DrawRule::Automatic),
        ),
    )
    .await;
    play_text(c, "automatic", &shuffle).await;
    let reply = play(c, "automatic", 1, text("Ng8")).await.unwrap();
    let game = reply.game.unwrap();
    assert_eq!(position(&game).status(), pb::GameStatus::Drawn);
    assert_eq!(
        position(&game).outcome.as_ref().unwrap().reason(),
        pb::EndReason::ThreefoldRepetition
    );
    // Made by a move, it is taken back with the move.
    let game = c
        .undo(undo_request("automatic", 1))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        position(game.game.as_ref().unwrap()).status(),
        pb::GameStatus::InProgress
    );

    // Fifty moves: from a clock of 99, one quiet move makes it claimable.
    create_from(
        c,
        create_chess("fifty", standard("8/8/4k3/8/8/3K4/8/R7 w - - 99 80")),
    )
    .await;
    let game = claim_draw(c, "fifty", 0).await;
    assert_rejected(game, Code::FailedPrecondition, "NO_DRAW_CLAIM");
    play(c, "fifty", 0, text("Ra2")).await.unwrap();
    // Black, to move, claims (FIDE 9.3.2).
    let game = claim_draw(c, "fifty", 1).await.unwrap();
    assert_eq!(
        position(&game).outcome.as_ref().unwrap().reason(),
        pb::EndReason::FiftyMoves
    );
}

#[tokio::test]
async fn every_refused_chess_move_and_rule_says_why() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    // Two knights can reach d2.
    create_from(
        c,
        create_chess("knights", standard("k7/8/8/8/8/8/8/KN3N2 w - - 0 1")),
    )
    .await;
    let refused = play(c, "knights", 0, text("Nd2")).await;
    let status = assert_rejected(refused, Code::InvalidArgument, "AMBIGUOUS_MOVE");
    assert_eq!(
        metadata(&status, "candidates").as_deref(),
        Some("b1d2,f1d2")
    );
    // Illegal, with why.
    let refused = play(c, "knights", 0, text("b1b3")).await;
    let status = assert_rejected(refused, Code::FailedPrecondition, "ILLEGAL_MOVE");
    assert_eq!(metadata(&status, "move").as_deref(), Some("b1b3"));
    assert!(
        metadata(&status, "why")
            .unwrap()
            .contains("cannot move there"),
        "{status:?}"
    );
    // Neither UCI nor SAN; too long; the wrong kind of move.
    for (mv, field) in [
        (text("knight to d2"), "move.chess.text"),
        (text("Nd2Nd2Nd2Nd2Nd2Nd2"), "move.chess.text"),
    ] {
        let refused = play(c, "knights", 0, mv).await;
        let status = assert_rejected(refused, Code::InvalidArgument, "INVALID_MOVE_TEXT");
        assert_eq!(bad_field(&status).as_deref(), Some(field));
    }
    assert_rejected(
        play(c, "knights", 0, place(0, 0)).await,
        Code::InvalidArgument,
        "WRONG_MOVE_KIND",
    );
    create(c, "ttt", mnk(3, 3, 3)).await;
    assert_rejected(
        play(c, "ttt", 0, text("e4")).await,
        Code::InvalidArgument,
        "WRONG_MOVE_KIND",
    );
    // A pawn on the last rank must promote.
    create_from(
        c,
        create_chess("promote", standard("k7/4P3/8/8/8/8/8/K7 w - - 0 1")),
    )
    .await;
    let refused = play(c, "promote", 0, text("e7e8")).await;
    let status = assert_rejected(refused, Code::FailedPrecondition, "ILLEGAL_MOVE");
    assert!(metadata(&status, "why").unwrap().contains("must promote"));
    let reply = play(c, "promote", 0, text("e8=Q+")).await.unwrap();
    assert_eq!(played(&reply).chess.as_ref().unwrap().uci, "e7e8q");
    // Rules: a FEN that does not read, one that has already ended, a
    // Chess960 start in standard chess.
    for (rules, field) in [
        (standard("not a fen"), "rules.chess.fen"),
        (
            standard("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"),
            "rules.chess.fen",
        ),
        (
            rules(pb::rule_set::Kind::Chess(pb::ChessRules {
                chess960_start: Some(7),
                ..pb::ChessRules::default()
            })),
            "rules.chess.chess960_start",
        ),
    ] {
        let refused = c.create_game(create_chess("bad", rules)).await;
        let status = assert_rejected(refused, Code::InvalidArgument, "INVALID_RULES");
        assert_eq!(bad_field(&status).as_deref(), Some(field));
    }
}
