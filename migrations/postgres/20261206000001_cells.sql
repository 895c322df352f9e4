-- Which cell of how many this database is, set by the first server that
-- opens it (NULL until then): a game's cell follows from its slot (slot
-- modulo the cell count), so a database given as another cell, or among
-- another number of cells, would hold games whose cell is elsewhere, and
-- the server refuses to start (see src/store/cells.rs).
ALTER TABLE cluster_config ADD COLUMN cells INTEGER CHECK (cells > 0);
ALTER TABLE cluster_config ADD COLUMN cell INTEGER CHECK (cell >= 0 AND cell < cells);
