//! Seat tokens: which seat a call's credential holds, whether it may act,
//! and the tokens issued and recovered (see [`crate::tokens`]). A value
//! type with no runtime, so its checks are unit-tested here.

use super::super::{Credential, RegistryError};
use crate::game::Command;
use crate::rules::Seat;
use crate::store::TokenHash;
use crate::tokens::SeatTokenKeys;

/// A game's seat tokens, by their hashes, one per seat in seat order; none
/// when the game was created without seat tokens (then moves need none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct SeatTokens(Vec<TokenHash>);

impl SeatTokens {
    /// The tokens whose hashes are `hashes` (empty: the game takes none).
    pub(super) fn new(hashes: Vec<TokenHash>) -> Self {
        SeatTokens(hashes)
    }

    /// Whether the game takes seat tokens.
    fn required(&self) -> bool {
        !self.0.is_empty()
    }

    /// The seat whose token `presented` is, if any.
    fn seat_of(&self, presented: &TokenHash) -> Option<Seat> {
        self.0
            .iter()
            .position(|h| h == presented)
            .map(|holder| Seat(holder as u8))
    }

    /// Checks the call's seat token against the acting seat's, in a game
    /// with seat tokens: a move must present its seat's token, an undo any
    /// seat's (which then names the seat asking). Returns the command with
    /// the undo's seat filled in from the token. A re-issue (authorized by
    /// the API key at the edge) needs a game that takes seat tokens.
    pub(super) fn authorize(
        &self,
        game_id: &str,
        command: Command,
        credential: &Credential,
    ) -> Result<Command, RegistryError> {
        if let Command::Timeout | Command::GraceExpired { .. } | Command::BotPlay { .. } = command {
            // The actor's own commands: no caller to authorize.
            return Ok(command);
        }
        if let Command::ReissueSeatToken { .. } = command {
            return if self.required() {
                Ok(command)
            } else {
                Err(RegistryError::NoSeatTokens {
                    game_id: game_id.to_owned(),
                })
            };
        }
        if !self.required() {
            return Ok(command);
        }
        let presented = match credential {
            Credential::None => return Err(RegistryError::Unauthenticated),
            Credential::Malformed(why) => {
                return Err(RegistryError::PermissionDenied { why: why.clone() });
            }
            Credential::Token(hash) => hash,
        };
        let holder = self.seat_of(presented);
        let denied = |why: String| Err(RegistryError::PermissionDenied { why });
        match command {
            // A seat that is not at the table is refused by decide, as such.
            Command::Play {
                seat: Some(seat), ..
            } if seat.index() >= self.0.len() => Ok(command),
            // The token names the seat acting (docs/guide/concepts.md, "The
            // seat a call acts for", and the proto's GameService).
            Command::Play { seat, .. }
            | Command::Undo { requested_by: seat }
            | Command::Redo { requested_by: seat }
            | Command::Act { seat, .. }
            | Command::Rematch { seat, .. } => match (holder, seat) {
                (None, _) => denied("the seat token is not one of this game's".into()),
                (Some(holder), Some(seat)) if seat != holder => {
                    denied(format!("the seat token is not {seat}'s"))
                }
                (Some(holder), _) => {
                    let seat = Some(holder);
                    Ok(match command {
                        Command::Play { mv, .. } => Command::Play { seat, mv },
                        Command::Undo { .. } => Command::Undo { requested_by: seat },
                        Command::Redo { .. } => Command::Redo { requested_by: seat },
                        Command::Act { action, .. } => Command::Act { seat, action },
                        Command::Rematch { rotate, .. } => Command::Rematch { seat, rotate },
                        other => other,
                    })
                }
            },
            Command::ReissueSeatToken { .. }
            | Command::Timeout
            | Command::GraceExpired { .. }
            | Command::BotPlay { .. } => {
                unreachable!("handled above")
            }
        }
    }

    /// The seat a stream's credential holds: `None` without one; refused
    /// when it is malformed or not one of the game's.
    pub(super) fn holder(&self, credential: &Credential) -> Result<Option<Seat>, RegistryError> {
        match credential {
            Credential::None => Ok(None),
            Credential::Malformed(why) => Err(RegistryError::PermissionDenied { why: why.clone() }),
            Credential::Token(hash) => {
                let holder = self.seat_of(hash);
                let holder = holder.ok_or_else(|| RegistryError::PermissionDenied {
                    why: "the seat token is not one of this game's".into(),
                })?;
                Ok(Some(holder))
            }
        }
    }

    /// A new token for `seat`, issued by the event at sequence `generation`,
    /// and the game's seat tokens with it in place of the old one.
    ///
    /// # Errors
    /// [`RegistryError::NoTokenSecret`] when the server has no `keys`.
    pub(super) fn issue(
        &self,
        keys: Option<&SeatTokenKeys>,
        game_id: &str,
        seat: Seat,
        generation: u64,
    ) -> Result<(String, SeatTokens), RegistryError> {
        let keys = keys.ok_or(RegistryError::NoTokenSecret)?;
        let token = keys.issue(game_id, seat.0.into(), generation);
        let mut hashes = self.0.clone();
        hashes[seat.index()] = crate::tokens::hash(&token);
        Ok((token, SeatTokens(hashes)))
    }

    /// The token a recorded SeatTokenReissued event at `sequence` issued to
    /// `seat`, derived again; empty when the seat's token was re-issued
    /// since (or the secret that made it was retired).
    pub(super) fn recover(
        &self,
        keys: Option<&SeatTokenKeys>,
        game_id: &str,
        seat: Seat,
        sequence: u64,
    ) -> String {
        let hash = self.0.get(seat.index());
        keys.zip(hash)
            .and_then(|(keys, hash)| keys.recover(game_id, seat.0.into(), sequence, hash))
            .unwrap_or_default()
    }

    /// The hashes, one per seat in seat order, as the store keeps them.
    pub(super) fn hashes(&self) -> &[TokenHash] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Action;
    use crate::rules::{Coord, Move};

    fn keys() -> SeatTokenKeys {
        SeatTokenKeys::from_secrets(vec![b"k".repeat(32)])
    }

    /// A two-seat game's tokens (generation 1) and the tokens themselves.
    fn two_seats() -> (SeatTokens, [Credential; 2]) {
        let keys = keys();
        let tokens = [keys.issue("g", 0, 1), keys.issue("g", 1, 1)];
        let hashes = tokens.iter().map(|t| crate::tokens::hash(t)).collect();
        let credential = |t: &str| Credential::Token(crate::tokens::hash(t));
        (
            SeatTokens::new(hashes),
            [credential(&tokens[0]), credential(&tokens[1])],
        )
    }

    fn play(seat: u8) -> Command {
        Command::Play {
            seat: Some(Seat(seat)),
            mv: Move::Place(Coord { row: 0, col: 0 }),
        }
    }

    fn denied(result: Result<Command, RegistryError>) -> String {
        match result {
            Err(RegistryError::PermissionDenied { why }) => why,
            other => panic!("expected PermissionDenied, got {other:?}"),
        }
    }

    #[test]
    fn a_game_without_seat_tokens_takes_any_call_but_no_reissue() {
        let none = SeatTokens::default();
        for credential in [
            Credential::None,
            Credential::Malformed("bad".into()),
            Credential::Token([7; 32]),
        ] {
            assert_eq!(none.authorize("g", play(1), &credential).unwrap(), play(1));
        }
        let reissue = Command::ReissueSeatToken { seat: Seat(0) };
        assert!(matches!(
            none.authorize("g", reissue, &Credential::None),
            Err(RegistryError::NoSeatTokens { game_id }) if game_id == "g"
        ));
    }

    #[test]
    fn a_move_needs_its_own_seats_token() {
        let (tokens, [zero, one]) = two_seats();
        assert_eq!(tokens.authorize("g", play(0), &zero).unwrap(), play(0));
        assert_eq!(tokens.authorize("g", play(1), &one).unwrap(), play(1));
        assert_eq!(
            denied(tokens.authorize("g", play(1), &zero)),
            "the seat token is not seat 1's"
        );
        assert_eq!(
            denied(tokens.authorize("g", play(0), &Credential::Token([7; 32]))),
            "the seat token is not one of this game's"
        );
        // No seat named: the token names it.
        let unnamed = Command::Play {
            seat: None,
            mv: Move::Place(Coord { row: 0, col: 0 }),
        };
        assert_eq!(tokens.authorize("g", unnamed, &one).unwrap(), play(1));
        assert!(matches!(
            tokens.authorize("g", play(0), &Credential::None),
            Err(RegistryError::Unauthenticated)
        ));
        assert_eq!(
            denied(tokens.authorize("g", play(0), &Credential::Malformed("why".into()))),
            "why"
        );
        // A seat not at the table is decide's to refuse.
        assert_eq!(tokens.authorize("g", play(5), &zero).unwrap(), play(5));
    }

    #[test]
    fn an_undo_or_an_action_is_named_by_the_token() {
        let (tokens, [_, one]) = two_seats();
        let undo = Command::Undo { requested_by: None };
        assert_eq!(
            tokens.authorize("g", undo, &one).unwrap(),
            Command::Undo {
                requested_by: Some(Seat(1))
            }
        );
        let resign = Command::Act {
            seat: Some(Seat(1)),
            action: Action::Resign,
        };
        assert_eq!(tokens.authorize("g", resign, &one).unwrap(), resign);
        let as_zero = Command::Act {
            seat: Some(Seat(0)),
            action: Action::Resign,
        };
        assert_eq!(
            denied(tokens.authorize("g", as_zero, &one)),
            "the seat token is not seat 0's"
        );
        assert_eq!(
            denied(tokens.authorize("g", undo, &Credential::Token([7; 32]))),
            "the seat token is not one of this game's"
        );
    }

    #[test]
    fn the_actors_own_commands_need_no_token() {
        let (tokens, _) = two_seats();
        for command in [Command::Timeout, Command::GraceExpired { seat: Seat(0) }] {
            assert_eq!(
                tokens.authorize("g", command, &Credential::None).unwrap(),
                command
            );
        }
    }

    #[test]
    fn a_stream_holds_the_seat_of_its_token() {
        let (tokens, [zero, one]) = two_seats();
        assert_eq!(tokens.holder(&Credential::None).unwrap(), None);
        assert_eq!(tokens.holder(&zero).unwrap(), Some(Seat(0)));
        assert_eq!(tokens.holder(&one).unwrap(), Some(Seat(1)));
        assert!(matches!(
            tokens.holder(&Credential::Token([7; 32])),
            Err(RegistryError::PermissionDenied { .. })
        ));
        assert!(matches!(
            tokens.holder(&Credential::Malformed("why".into())),
            Err(RegistryError::PermissionDenied { .. })
        ));
    }

    #[test]
    fn a_reissued_token_replaces_the_old_and_is_recovered_until_reissued_again() {
        let (tokens, [zero, _]) = two_seats();
        let keys = keys();
        assert!(matches!(
            tokens.issue(None, "g", Seat(0), 5),
            Err(RegistryError::NoTokenSecret)
        ));
        let (token, reissued) = tokens.issue(Some(&keys), "g", Seat(0), 5).unwrap();
        let new = Credential::Token(crate::tokens::hash(&token));
        assert_eq!(reissued.holder(&new).unwrap(), Some(Seat(0)));
        assert!(reissued.authorize("g", play(0), &zero).is_err());
        assert_eq!(reissued.hashes()[1], tokens.hashes()[1]);
        assert_eq!(reissued.recover(Some(&keys), "g", Seat(0), 5), token);
        assert_eq!(reissued.recover(None, "g", Seat(0), 5), "");
        let (_, again) = reissued.issue(Some(&keys), "g", Seat(0), 9).unwrap();
        assert_eq!(again.recover(Some(&keys), "g", Seat(0), 5), "");
    }
}
