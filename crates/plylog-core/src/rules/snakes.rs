//! Snakes and ladders: a race along squares 1..N (100 by default). Tokens
//! start off the board on square 0, so a first roll of n lands on square n
//! (the Milton Bradley rule). A turn is one roll of the dice; the token moves
//! the total forward, and landing on the start of a jump (a ladder up or a
//! snake down) moves it to the jump's end. The first seat whose token rests
//! on square N wins.
//!
//! Options:
//! - [`Overshoot`]: what a roll past N does (exact landing by default).
//! - The dice: how many, how many sides (one six-sided die by default).
//! - An extra turn after a roll that shows a six, optionally with the common
//!   limit that a third six in a row is forfeited (the token stays, the turn
//!   passes).
//! - Chaining: whether a jump may end where another starts (then both are
//!   taken); off by default.
//!
//! Dice are drawn by the rules, not by the caller: roll number r (0-based,
//! counting the rolls on the board) of a game with seed s reads its own
//! stream r of ChaCha8 seeded with s ([`rand_chacha::ChaCha8Rng`], the
//! ChaCha stream cipher with 8 rounds; Bernstein 2008), and each die is
//! sampled with [`rand::distr::Uniform`], which uses Lemire's
//! multiply-and-reject method and so has no modulo bias. The same seed gives
//! the same game, whatever the process, and a roll that is undone and asked
//! for again shows the same dice. Replay never draws: events record the dice.

use rand::SeedableRng;
use rand::distr::{Distribution, Uniform};
use rand_chacha::ChaCha8Rng;

use super::{
    Board, EndReason, Game, GamePosition, IllegalMove, InvalidRules, MAX_SEATS, Move, Outcome,
    Played, Seat,
};

/// A race in progress: each seat's square, the rolls made and the current
/// run of sixes. No board cells.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Race {
    /// Each seat's square (0: off the board), by seat index.
    tokens: Vec<u32>,
    /// Rolls on the board (made minus undone): the next roll's number.
    rolls: u64,
    /// Sixes in a row the seat to move has rolled in its current turn.
    sixes: u32,
}

impl Race {
    /// The start: every one of `seats` tokens off the board, on square 0.
    pub fn new(seats: usize) -> Self {
        Race {
            tokens: vec![0; seats],
            rolls: 0,
            sixes: 0,
        }
    }

    /// `seat`'s square (0 when it has none).
    pub fn token(&self, seat: Seat) -> u32 {
        self.tokens.get(seat.index()).copied().unwrap_or(0)
    }

    /// Rolls on the board: made minus undone.
    pub fn rolls(&self) -> u64 {
        self.rolls
    }

    /// Sixes in a row the seat to move has rolled in its current turn.
    pub fn sixes(&self) -> u32 {
        self.sixes
    }

    /// Moves `seat`'s token to `to` after a roll; `sixes` is the new run of
    /// sixes of the seat to move next.
    fn advance(&mut self, seat: Seat, to: u32, sixes: u32) {
        self.tokens[seat.index()] = to;
        self.rolls += 1;
        self.sixes = sixes;
    }

    /// Takes back the last roll: the inverse of [`Race::advance`].
    fn retreat(&mut self, seat: Seat, from: u32, sixes: u32) {
        self.tokens[seat.index()] = from;
        self.rolls -= 1;
        self.sixes = sixes;
    }
}

impl GamePosition for Race {
    fn board(&self) -> Option<&Board> {
        None
    }

    fn squares(&self) -> &[u32] {
        &self.tokens
    }

    fn heap_bytes(&self) -> usize {
        4 * self.tokens.len()
    }
}

/// What a roll that would carry a token past the last square does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Overshoot {
    /// The token must land exactly on the last square; a roll past it does
    /// not move the token (the default, and the rule of Althoen et al.).
    ExactLanding,
    /// The token walks to the last square and back by the points left over.
    BounceBack,
    /// Reaching or passing the last square wins.
    ReachOrPass,
}

/// Why a roll left the token where it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Forfeit {
    /// Exact landing, and the roll would have passed the last square.
    Overshoot,
    /// The third six in a row in one turn (with the three-sixes limit).
    ThirdSix,
}

/// One roll as played: what the dice showed and where the token went. The
/// event records all of it, so replay never draws again.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Roll {
    /// Each die's face, 1 to sides, in the order drawn.
    pub dice: Vec<u32>,
    /// The square the token started from (0: off the board).
    pub from: u32,
    /// The squares the token stepped on, in order, ending where it landed
    /// before any jump (with bounce-back: up to N, then back). Empty when the
    /// roll was forfeited.
    pub passed: Vec<u32>,
    /// The jumps taken from the landing square, `(from, to)`, in order
    /// (more than one only with chaining).
    pub jumps: Vec<(u32, u32)>,
    /// The square the token rests on after the roll.
    pub to: u32,
    /// Sixes the seat had rolled in a row in this turn before this roll (0
    /// unless extra turns on a six are on).
    pub sixes_before: u32,
    /// Whether the same seat rolls again.
    pub extra_turn: bool,
    /// Set when the roll did not move the token.
    pub forfeit: Option<Forfeit>,
}

/// The caller's choices for a snakes-and-ladders game, before checking.
/// `None` takes the default.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SnakesLaddersOptions {
    /// Squares on the board, N (default 100; 2 to [`SnakesLaddersRules::MAX_SQUARES`]).
    pub squares: Option<i64>,
    /// The jumps `(from, to)`: ladders when `to > from`, snakes otherwise.
    pub jumps: Vec<(i64, i64)>,
    /// Whether a jump may end where another starts.
    pub chaining: bool,
    /// What a roll past the last square does (default exact landing).
    pub overshoot: Option<Overshoot>,
    /// Dice rolled per turn (default 1, at most 10).
    pub dice: Option<i64>,
    /// Faces per die (default 6, 2 to 100).
    pub sides: Option<i64>,
    /// Whether a roll that shows a six gives the seat another roll.
    pub extra_turn_on_six: bool,
    /// With extra turns: whether the third six in a row is forfeited.
    pub three_sixes_forfeit: bool,
    /// The dice generator's seed.
    pub seed: u64,
}

/// A validated snakes-and-ladders configuration.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SnakesLaddersRules {
    squares: u32,
    /// The jumps sorted by their start square.
    jumps: Vec<(u32, u32)>,
    /// `jump[s]`: where a token landing on `s` jumps to (`s` when none).
    jump: Vec<u32>,
    chaining: bool,
    overshoot: Overshoot,
    dice: u32,
    sides: u32,
    extra_turn_on_six: bool,
    three_sixes_forfeit: bool,
    seed: u64,
}

impl SnakesLaddersRules {
    /// The most squares a board may have.
    pub const MAX_SQUARES: u32 = 1000;
    /// The most dice per roll.
    pub const MAX_DICE: u32 = 10;
    /// The most faces per die.
    pub const MAX_SIDES: u32 = 100;

    /// Checks a configuration against a cell limit of `max_cells` (each
    /// square counts as a cell).
    ///
    /// # Errors
    /// [`InvalidRules`] naming the field:
    /// - `squares`: fewer than 2, more than [`Self::MAX_SQUARES`] or
    ///   `max_cells`, or not more than the highest possible roll;
    /// - `dice`, `sides`: outside 1 to 10 dice, 2 to 100 sides;
    /// - `extra_turn_on_six`: dice with fewer than six sides;
    ///   `three_sixes_forfeit`: without extra turns on a six;
    /// - `jumps`, naming the jump as `jumps[i] from->to`: it starts or ends
    ///   outside squares 1..N, starts on the last square, starts and ends on
    ///   one square, starts where an earlier jump starts, ends where another
    ///   starts while chaining is off, or is part of a cycle of jumps when it
    ///   is on; or, naming the square, a square a token can reach from which
    ///   the last square can never be reached.
    ///
    /// Square 0 (off the board) is where tokens start, so no jump can start
    /// there; a jump from square 1 (1->38 on the Milton Bradley board) and a
    /// ladder onto square N (80->100 there) are allowed.
    pub fn new(options: SnakesLaddersOptions, max_cells: u64) -> Result<Self, InvalidRules> {
        let dice = options.dice.unwrap_or(1);
        if !(1..=i64::from(Self::MAX_DICE)).contains(&dice) {
            return Err(InvalidRules::new(
                "dice",
                format!("dice={dice} must be 1 to {}", Self::MAX_DICE),
            ));
        }
        let sides = options.sides.unwrap_or(6);
        if !(2..=i64::from(Self::MAX_SIDES)).contains(&sides) {
            return Err(InvalidRules::new(
                "sides",
                format!("sides={sides} must be 2 to {}", Self::MAX_SIDES),
            ));
        }
        let (dice, sides) = (dice as u32, sides as u32);
        let max_squares = i64::from(Self::MAX_SQUARES).min(max_cells.min(i64::MAX as u64) as i64);
        let squares = options.squares.unwrap_or(100);
        if !(2..=max_squares).contains(&squares) {
            return Err(InvalidRules::new(
                "squares",
                format!("squares={squares} must be 2 to {max_squares}"),
            ));
        }
        let squares = squares as u32;
        if squares <= dice * sides {
            return Err(InvalidRules::new(
                "squares",
                format!(
                    "squares={squares} must be more than the highest roll of {dice}d{sides} ({})",
                    dice * sides
                ),
            ));
        }
        if options.extra_turn_on_six && sides < 6 {
            return Err(InvalidRules::new(
                "extra_turn_on_six",
                format!("extra turns on a six need dice with at least 6 sides, not {sides}"),
            ));
        }
        if options.three_sixes_forfeit && !options.extra_turn_on_six {
            return Err(InvalidRules::new(
                "three_sixes_forfeit",
                "the three-sixes limit needs extra_turn_on_six",
            ));
        }
        let jumps = check_jumps(&options.jumps, squares, options.chaining)?;
        let mut jump: Vec<u32> = (0..=squares).collect();
        for &(from, to) in &jumps {
            jump[from as usize] = to;
        }
        let mut jumps = jumps;
        jumps.sort_unstable();
        let rules = SnakesLaddersRules {
            squares,
            jumps,
            jump,
            chaining: options.chaining,
            overshoot: options.overshoot.unwrap_or(Overshoot::ExactLanding),
            dice,
            sides,
            extra_turn_on_six: options.extra_turn_on_six,
            three_sixes_forfeit: options.three_sixes_forfeit,
            seed: options.seed,
        };
        rules.check_finishable()?;
        Ok(rules)
    }

    /// The same board and options with the dice seeded by `seed`.
    pub fn with_seed(self, seed: u64) -> Self {
        SnakesLaddersRules { seed, ..self }
    }

    /// Squares on the board, N.
    pub fn squares(&self) -> u32 {
        self.squares
    }

    /// The jumps `(from, to)`, sorted by start square.
    pub fn jumps(&self) -> &[(u32, u32)] {
        &self.jumps
    }

    /// Whether jumps chain.
    pub fn chaining(&self) -> bool {
        self.chaining
    }

    /// The overshoot rule.
    pub fn overshoot(&self) -> Overshoot {
        self.overshoot
    }

    /// Dice per roll.
    pub fn dice(&self) -> u32 {
        self.dice
    }

    /// Faces per die.
    pub fn sides(&self) -> u32 {
        self.sides
    }

    /// Whether a six gives another roll.
    pub fn extra_turn_on_six(&self) -> bool {
        self.extra_turn_on_six
    }

    /// Whether the third six in a row is forfeited.
    pub fn three_sixes_forfeit(&self) -> bool {
        self.three_sixes_forfeit
    }

    /// The dice generator's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Where a token that lands on `square` comes to rest: the end of the
    /// jump starting there (of the whole chain, with chaining), else
    /// `square`. Fills `taken` with the jumps.
    fn rest(&self, square: u32, taken: &mut Vec<(u32, u32)>) -> u32 {
        let mut at = square;
        while self.jump[at as usize] != at {
            let to = self.jump[at as usize];
            taken.push((at, to));
            at = to;
            if !self.chaining {
                break;
            }
        }
        at
    }

    /// Where a roll totalling `total` from `from` lands before jumps, with
    /// the squares stepped on; `None` when exact landing forfeits it.
    fn walk(&self, from: u32, total: u32) -> Option<(u32, Vec<u32>)> {
        let n = self.squares;
        let target = from + total;
        if target <= n {
            return Some((target, (from + 1..=target).collect()));
        }
        match self.overshoot {
            Overshoot::ExactLanding => None,
            Overshoot::ReachOrPass => Some((n, (from + 1..=n).collect())),
            Overshoot::BounceBack => {
                let back = 2 * n - target;
                Some((back, (from + 1..=n).chain((back..n).rev()).collect()))
            }
        }
    }

    /// The squares a token resting on `from` can rest on after one roll that
    /// moves it (forfeits excluded), with repeats.
    fn next_squares(&self, from: u32) -> impl Iterator<Item = u32> + '_ {
        (self.dice..=self.dice * self.sides)
            .filter_map(move |total| self.walk(from, total))
            .map(|(landing, _)| self.rest(landing, &mut Vec::new()))
    }

    /// The fewest rolls that take a token from the start to the last square
    /// (not counting extra turns), computed by breadth-first search over the
    /// board; `None` if it cannot be done (never, once validated).
    pub fn shortest_game(&self) -> Option<u32> {
        let n = self.squares as usize;
        let mut rolls = vec![u32::MAX; n + 1];
        rolls[0] = 0;
        let mut queue = std::collections::VecDeque::from([0u32]);
        while let Some(at) = queue.pop_front() {
            if at as usize == n {
                return Some(rolls[n]);
            }
            for next in self.next_squares(at) {
                if rolls[next as usize] == u32::MAX {
                    rolls[next as usize] = rolls[at as usize] + 1;
                    queue.push_back(next);
                }
            }
        }
        None
    }

    /// Refuses a board where a token can come to rest on a square from which
    /// the last square can never be reached (it could never finish).
    fn check_finishable(&self) -> Result<(), InvalidRules> {
        let n = self.squares as usize;
        // Forward: the squares a token can rest on, and each one's moves.
        let mut moves: Vec<Vec<u32>> = vec![Vec::new(); n + 1];
        let mut reached = vec![false; n + 1];
        reached[0] = true;
        let mut stack = vec![0u32];
        while let Some(at) = stack.pop() {
            let mut next: Vec<u32> = self.next_squares(at).collect();
            next.sort_unstable();
            next.dedup();
            for &to in &next {
                if !reached[to as usize] {
                    reached[to as usize] = true;
                    stack.push(to);
                }
            }
            moves[at as usize] = next;
        }
        // Backward from the last square over the reversed moves.
        let mut into: Vec<Vec<u32>> = vec![Vec::new(); n + 1];
        for (at, next) in moves.iter().enumerate() {
            for &to in next {
                into[to as usize].push(at as u32);
            }
        }
        let mut finishes = vec![false; n + 1];
        finishes[n] = true;
        let mut stack = vec![n as u32];
        while let Some(at) = stack.pop() {
            for &from in &into[at as usize] {
                if !finishes[from as usize] {
                    finishes[from as usize] = true;
                    stack.push(from);
                }
            }
        }
        match (0..=n).find(|&s| reached[s] && !finishes[s]) {
            Some(stuck) => Err(InvalidRules::new(
                "jumps",
                format!(
                    "a token can come to rest on square {stuck}, from which square {n} can never be reached"
                ),
            )),
            None => Ok(()),
        }
    }

    /// Checks that `mv` is a roll.
    pub(super) fn check(&self, mv: Move) -> Result<(), IllegalMove> {
        match mv {
            Move::Roll => Ok(()),
            Move::PlaceMark { .. } => Err(IllegalMove::UnexpectedMark {
                variant: "snakes and ladders",
            }),
            // Any other kind of move, including kinds added later.
            _ => Err(IllegalMove::WrongMoveKind {
                variant: "snakes and ladders",
                expected: "roll moves",
            }),
        }
    }

    /// The dice of roll number `roll` (0-based) of this game.
    fn draw(&self, roll: u64) -> Vec<u32> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(roll);
        let die = Uniform::new_inclusive(1, self.sides).expect("2 to 100 sides, checked");
        (0..self.dice).map(|_| die.sample(&mut rng)).collect()
    }

    /// Rolls for `seat` on `position`: draws the dice and moves the token.
    /// The position is not changed.
    fn roll(&self, position: &Race, seat: Seat) -> Played {
        let dice = self.draw(position.rolls());
        let from = position.token(seat);
        let sixes_before = position.sixes();
        let six = self.extra_turn_on_six && dice.contains(&6);
        let third_six = six && self.three_sixes_forfeit && sixes_before >= 2;
        let total = dice.iter().sum();
        let mut jumps = Vec::new();
        let (to, passed, forfeit) = match self.walk(from, total) {
            _ if third_six => (from, Vec::new(), Some(Forfeit::ThirdSix)),
            None => (from, Vec::new(), Some(Forfeit::Overshoot)),
            Some((landing, passed)) => (self.rest(landing, &mut jumps), passed, None),
        };
        let outcome = (to == self.squares).then(|| Outcome::Win {
            seat,
            line: Vec::new(),
        });
        Played {
            mv: Move::Roll,
            placement: None,
            flips: Vec::new(),
            passes: Vec::new(),
            chess: None,
            roll: Some(Box::new(Roll {
                dice,
                from,
                passed,
                jumps,
                to,
                sixes_before,
                extra_turn: six && !third_six && outcome.is_none(),
                forfeit,
            })),
            outcome,
        }
    }
}

/// The name listings show: `snakes-and-ladders <squares>`.
impl std::fmt::Display for SnakesLaddersRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "snakes-and-ladders {}", self.squares)
    }
}

/// Snakes and ladders: one seat or more race their tokens; a move is a roll
/// of dice the rules draw from the game's seed.
impl Game for SnakesLaddersRules {
    type Position = Race;

    fn initial_position(&self, seats: usize) -> Race {
        Race::new(seats)
    }

    fn seat_range(&self) -> (usize, usize) {
        (1, MAX_SEATS)
    }

    fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        self.check(mv)
    }

    fn play(&self, race: &Race, seat: Seat, mv: Move) -> Result<Played, IllegalMove> {
        self.check(mv)?;
        Ok(self.roll(race, seat))
    }

    /// # Panics
    /// When the record carries no roll.
    fn apply(&self, race: &mut Race, seat: Seat, played: &Played) {
        let roll = played.roll.as_ref().expect("a roll records its dice");
        let sixes = if roll.extra_turn {
            roll.sixes_before + 1
        } else {
            0
        };
        race.advance(seat, roll.to, sixes);
    }

    fn undo(&self, race: &mut Race, seat: Seat, played: &Played) {
        let roll = played.roll.as_ref().expect("a roll records its dice");
        race.retreat(seat, roll.from, roll.sixes_before);
    }

    /// A recorded roll fits when it starts from the seat's square with the
    /// seat's run of sixes and rests on a square of the board. The dice are
    /// not drawn again.
    fn check_played(&self, race: &Race, seat: Seat, played: &Played) -> Result<(), String> {
        let Some(roll) = &played.roll else {
            return Err("a roll without its dice".into());
        };
        if roll.from != race.token(seat) || roll.sixes_before != race.sixes() {
            return Err(format!(
                "a roll from square {} after {} sixes, but {seat} is on square {} after {}",
                roll.from,
                roll.sixes_before,
                race.token(seat),
                race.sixes()
            ));
        }
        if roll.to > self.squares {
            return Err(format!("a roll to square {} of {}", roll.to, self.squares));
        }
        Ok(())
    }

    fn legal_moves<'a>(&'a self, _race: &'a Race, _seat: Seat) -> impl Iterator<Item = Move> + 'a {
        std::iter::once(Move::Roll)
    }

    /// A six with extra turns on lets the seat roll again.
    fn next_to_move(&self, seats: usize, seat: Seat, played: &Played) -> Seat {
        match &played.roll {
            Some(roll) if roll.extra_turn => seat,
            _ => seat.next(seats),
        }
    }

    /// The only way a race ends: a token reaches the last square.
    fn end_reason(&self, _: &Played) -> EndReason {
        EndReason::RaceFinished
    }
}

/// Checks each jump alone, then the jumps together; returns them as `u32`.
fn check_jumps(
    jumps: &[(i64, i64)],
    squares: u32,
    chaining: bool,
) -> Result<Vec<(u32, u32)>, InvalidRules> {
    let n = i64::from(squares);
    let name = |i: usize| format!("jumps[{i}] {}->{}", jumps[i].0, jumps[i].1);
    let bad = |i: usize, why: String| Err(InvalidRules::new("jumps", format!("{} {why}", name(i))));
    let mut starts = std::collections::HashMap::new();
    for (i, &(from, to)) in jumps.iter().enumerate() {
        if !(1..=n).contains(&from) || !(1..=n).contains(&to) {
            return bad(i, format!("goes outside squares 1 to {n}"));
        }
        if from == n {
            return bad(
                i,
                format!("starts on the last square ({n}), where the game ends"),
            );
        }
        if from == to {
            return bad(i, format!("starts and ends on square {from}"));
        }
        if let Some(j) = starts.insert(from, i) {
            return bad(i, format!("starts on square {from}, as {} does", name(j)));
        }
    }
    for (i, &(_, to)) in jumps.iter().enumerate() {
        let Some(&j) = starts.get(&to) else { continue };
        if !chaining {
            return bad(
                i,
                format!("ends where {} starts, and chaining is off", name(j)),
            );
        }
        // Follow the chain; coming back to jump i's start is a cycle.
        let mut at = to;
        let mut path = vec![jumps[i].0, to];
        while let Some(&k) = starts.get(&at) {
            at = jumps[k].1;
            path.push(at);
            if at == jumps[i].0 {
                let cycle: Vec<String> = path.iter().map(i64::to_string).collect();
                return bad(
                    i,
                    format!("is part of a cycle of jumps {}", cycle.join("->")),
                );
            }
            if path.len() > jumps.len() + 1 {
                break;
            }
        }
    }
    Ok(jumps
        .iter()
        .map(|&(from, to)| (from as u32, to as u32))
        .collect())
}

#[cfg(test)]
mod tests;
