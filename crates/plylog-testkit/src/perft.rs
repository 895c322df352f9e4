//! Perft fixtures (`tests/fixtures/chess/*.perft`, with their sources in
//! that folder's README): positions with the number of leaves of their
//! tree of legal moves at each depth.

/// One position of a `.perft` file: its name, its FEN and its counts by
/// depth.
#[derive(Debug, Clone)]
pub struct PerftCase {
    /// The position's name (`id`).
    pub id: String,
    /// The position (`epd`): a FEN, maybe without its move counters.
    pub fen: String,
    /// (depth, leaves), in the file's order.
    pub counts: Vec<(u32, u64)>,
}

/// Positions no game can reach, which plylog's rules refuse (python-chess
/// and shakmaty count their moves; plylog's move generator, cozy-chess,
/// does not take them, and neither does a game started from a FEN): an en
/// passant square no legal last move can have made (the side to move was
/// in check before the double step), and more pieces than a side has.
pub const UNREACHABLE: [&str; 4] = [
    "align-ep",
    "align-ep-pinned",
    "ep-unrelated-check",
    "max-legals-too-much-material",
];

/// The positions of a `.perft` file.
///
/// # Panics
/// On a line that is not `id`, `epd` or `perft` with its value.
pub fn perft_cases(text: &str) -> Vec<PerftCase> {
    let mut cases: Vec<PerftCase> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(' ').expect("a key and a value");
        match key {
            "id" => cases.push(PerftCase {
                id: value.to_owned(),
                fen: String::new(),
                counts: Vec::new(),
            }),
            "epd" => cases.last_mut().expect("an id first").fen = value.to_owned(),
            "perft" => {
                let (depth, count) = value.split_once(' ').expect("depth and count");
                cases.last_mut().expect("an id first").counts.push((
                    depth.parse().expect("a depth"),
                    count.parse().expect("a count"),
                ));
            }
            other => panic!("unknown key {other:?}"),
        }
    }
    cases
}
