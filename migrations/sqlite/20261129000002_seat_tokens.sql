-- Seat credentials: the SHA-256 hashes of the seat tokens CreateGame issued,
-- 32 bytes per seat in seat order. NULL for a game created without seat
-- tokens (it never requires them). The tokens themselves are never stored.
ALTER TABLE games ADD COLUMN seat_token_hashes BLOB;
