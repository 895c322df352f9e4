//! The rules checked without a server, in one test binary (one link instead
//! of four): real game records, OpenSpiel's traces, the tic-tac-toe
//! reference figures and the Milton Bradley snakes-and-ladders board. Each
//! module's fixtures are under `tests/fixtures/`, with their sources.

mod game_records;
mod openspiel_traces;
mod rules_reference;
mod snakes_ladders;
