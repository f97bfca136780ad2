-- Nothing to store: one process writes an SQLite database, so the write generations are kept in
-- memory (Store::generation, Store::access_generation). The PostgreSQL twin creates the
-- sequences nodes share.
SELECT 1;
