//! The engines against references: exhaustive game trees and published
//! solver results.

mod connect4;
mod minimax;
