//! The engines against references: exhaustive game trees (`minimax`) and
//! Pascal Pons' Connect Four solver results (`connect4`).

mod connect4;
mod minimax;
