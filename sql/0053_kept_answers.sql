-- 0053_kept_answers: the slots answers kept in the database for processes that keep nothing
-- themselves. A plain CGI program starts a database session for every request, and a fresh
-- session pays for every table, index and function its statement touches before it runs it
-- (catalog loading and planning: about 8 times the execution for a court's slots). A slots
-- answer computed once is kept here with its validator; a later request of the same court
-- and date reads it with the versions that validate it, three narrow tables instead of nine.
-- UNLOGGED: a cache, not data: no WAL, emptied after a crash, absent on standbys (the
-- programs never read it there). The rules: slot_answer_kept and slot_answer_keep in
-- sql/areas/20_versions.sql; the sweeper forgets what can no longer be served.

CREATE UNLOGGED TABLE slot_answers_kept (
    resource_id  uuid NOT NULL,
    booking_date date NOT NULL,
    venue_id     uuid NOT NULL,
    validator    text NOT NULL,
    valid_until  timestamptz,
    slots        json NOT NULL,
    kept_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (resource_id, booking_date)
);
COMMENT ON TABLE slot_answers_kept IS
    'Slots answers of GET /api/resources/{id}/slots kept for plain CGI, valid while their validator is current and valid_until has not passed.';
COMMENT ON COLUMN slot_answers_kept.resource_id IS 'The court.';
COMMENT ON COLUMN slot_answers_kept.booking_date IS 'The local date of the slots.';
COMMENT ON COLUMN slot_answers_kept.venue_id IS 'The court''s venue, whose version is part of the validator.';
COMMENT ON COLUMN slot_answers_kept.validator IS 'The validator read with the answer (slot_validator_of).';
COMMENT ON COLUMN slot_answers_kept.valid_until IS 'The first instant time alone changes the answer; NULL: never.';
COMMENT ON COLUMN slot_answers_kept.slots IS 'The answer''s body.';
COMMENT ON COLUMN slot_answers_kept.kept_at IS 'When it was computed.';
