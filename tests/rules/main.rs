//! The rules and the game aggregate checked without a server, in one test
//! binary: the aggregate's given/when/then and property tests over every
//! game, seat validation, real game records, OpenSpiel's traces, the
//! tic-tac-toe reference figures and the Milton Bradley snakes-and-ladders
//! board. Each module's fixtures are under `tests/fixtures/`, with their
//! sources.

mod aggregate;
mod game_records;
mod openspiel_traces;
mod rules_reference;
mod seats;
mod snakes_ladders;
