-- 0053_kept_answers: the slots answers and owner lists kept in the database for processes
-- that keep nothing themselves. A plain CGI program starts a database session for every request, and a fresh
-- session pays for every table, index and function its statement touches before it runs it
-- (catalog loading and planning: about 8 times the execution for a court's slots). A slots
-- answer computed once is kept here with its validator; a later request of the same court
-- and date reads it with the versions that validate it, three narrow tables instead of nine.
-- UNLOGGED: a cache, not data: no WAL, emptied after a crash, absent on standbys (the
-- programs never read it there). The rules: slot_answer_kept and slot_answer_keep in
-- sql/areas/20_versions.sql, owner_list_kept and owner_list_keep in sql/areas/68_staff.sql;
-- the sweeper forgets what can no longer be served.

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

-- An owner list's page (GET /api/owner/venues) as one caller asked it: it costs a fresh
-- session the user's staff rows, the venues, their images and courts; kept, the venue owners
-- it was read under and their versions.
CREATE UNLOGGED TABLE owner_lists_kept (
    user_id     uuid NOT NULL,
    as_owner    boolean NOT NULL,
    page_limit  text NOT NULL,
    page_cursor text NOT NULL,
    scopes      uuid[] NOT NULL,
    validator   text NOT NULL,
    body        text NOT NULL,
    headers     text NOT NULL,
    kept_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, as_owner, page_limit, page_cursor)
);
COMMENT ON TABLE owner_lists_kept IS
    'Pages of GET /api/owner/venues kept for plain CGI, valid while the versions of their scopes are their validator.';
COMMENT ON COLUMN owner_lists_kept.user_id IS 'The caller.';
COMMENT ON COLUMN owner_lists_kept.as_owner IS 'Whether the caller''s token carried the OWNER role (their own venues are listed).';
COMMENT ON COLUMN owner_lists_kept.page_limit IS 'The limit asked for, as sent; - for none.';
COMMENT ON COLUMN owner_lists_kept.page_cursor IS 'The cursor asked for, as sent; - for none.';
COMMENT ON COLUMN owner_lists_kept.scopes IS 'owner_list_scopes of the caller when the page was read: the caller, then the owners whose venues they staff.';
COMMENT ON COLUMN owner_lists_kept.validator IS 'The versions of the scopes when the page was read (owner_list_version_of).';
COMMENT ON COLUMN owner_lists_kept.body IS 'The page.';
COMMENT ON COLUMN owner_lists_kept.headers IS 'The answer''s header lines beside the body (the Link to the next page), or empty.';
COMMENT ON COLUMN owner_lists_kept.kept_at IS 'When it was computed.';
