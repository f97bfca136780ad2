-- The write generations every node checks (Store::observe), bumped after a write commits and
-- read with `SELECT last_value`. A sequence takes no row lock, so writers never wait on it.
-- write_generation: after every observed write; access_generation: after every write that may
-- change who a credential is or what it may reach (all but Store::write_content).
CREATE SEQUENCE write_generation;
CREATE SEQUENCE access_generation;
