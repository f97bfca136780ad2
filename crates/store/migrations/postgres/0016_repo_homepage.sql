-- A repository's homepage (set through the repository API).
ALTER TABLE repos ADD COLUMN homepage TEXT;
