-- 0015_availability: answers that can be reused while nothing they depend on has changed,
-- and an eligible-player count that reads only the players it counts.
--
-- 1. Availability versions. The slots of a court on a date depend on the court, its weekly
--    schedule and price rules, its venue (status, time zone, booking window, notice), the
--    venue's holidays and the live requests on that court and date. Every change to any of
--    them stamps a version row in the same transaction with a fresh value of one sequence:
--    the venue's, the court's, or the court and date's. The three values read in one
--    statement are a validator of the answer read in that same statement: no committed change
--    can leave all three as they were, and no value is ever handed out twice, so a validator
--    once seen never comes back with another answer behind it.
--    Time changes an answer without any write (a slot starts, enters the notice period or
--    the booking window, a payment hold lapses): slot_answer also says until when its answer
--    holds, and a reused answer is never served past that instant.
--
-- 2. eligible_players_count walks players_home_earth_idx nearest first and stops at the cap:
--    a search in a dense city reads about cap index entries instead of every home inside the
--    radius's bounding box (CITY: 2 ms instead of 8-11 ms).

-- ---- 2. nearest first --------------------------------------------------------------------

-- The eligibility rules (0005), now with the chord distance to the centre, by which
-- players_home_earth_idx can return them nearest first.

-- ---- 1. availability versions ------------------------------------------------------------

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
