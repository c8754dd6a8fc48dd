-- 0015_availability: versions of what a slot answer depends on, so that an answer can be
-- reused while nothing under it has changed. Every change to a court, its schedule or price
-- rules, its venue, the venue's holidays or the live requests of a court and date stamps, in
-- the same transaction, a fresh value of availability_version_seq on the venue's or the
-- court's row of answer_versions, or on the court and date's of availability_day_versions.
-- No committed change leaves all three as they were and no value is handed out twice, so the
-- three read in one statement are a validator of the answer read in it.
-- The rules over these tables: sql/areas/20_versions.sql (the stamps and slot_answer).

CREATE SEQUENCE availability_version_seq;
COMMENT ON SEQUENCE availability_version_seq IS
    'Values of answer versions: each change takes a value never handed out before.';

CREATE TABLE answer_versions (
    scope_id uuid PRIMARY KEY,
    version  bigint NOT NULL
);
COMMENT ON TABLE answer_versions IS
    'Version of what a venue or a court contributes to every slot answer of its courts, or of what an owner''s venue list shows; no row = never changed since this migration. Rows are never deleted.';
COMMENT ON COLUMN answer_versions.scope_id IS
    'A venue id, a court (resource) id, or an owner''s user id for their venue list.';

CREATE TABLE availability_day_versions (
    resource_id  uuid NOT NULL,
    booking_date date NOT NULL,
    version      bigint NOT NULL,
    PRIMARY KEY (resource_id, booking_date)
);
COMMENT ON TABLE availability_day_versions IS
    'Version of the live requests of one court on one local date; no row = none ever changed.';

-- the payment holds of a court and date, whose lapse changes its slots (slot_answer)
CREATE INDEX match_requests_holds_idx ON match_requests (resource_id, booking_date)
    WHERE status = 'PENDING_PAYMENT';
