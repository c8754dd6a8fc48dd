-- 0051_court_blocks: the club's desk (rules: sql/areas/67_desk.sql). A court is closed for a
-- time by a block (maintenance, a lesson, an event, or a walk-in customer booked and paid at
-- the desk), and a club may call a match off itself, with every paid share refunded.

CREATE TABLE court_blocks (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    resource_id   uuid NOT NULL REFERENCES resources (id),
    block_date    date NOT NULL,
    start_time    time NOT NULL,
    end_time      time NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('MAINTENANCE', 'LESSON', 'EVENT', 'DESK')),
    note          text,
    customer_name text,
    amount        numeric(12, 2) CHECK (amount >= 0),
    currency      char(3),
    created_by    uuid NOT NULL REFERENCES users (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT court_blocks_times CHECK (end_time > start_time),
    -- a customer and money only at the desk, and money always with its currency
    CONSTRAINT court_blocks_desk_only
        CHECK (kind = 'DESK' OR (customer_name IS NULL AND amount IS NULL)),
    CONSTRAINT court_blocks_amount_currency CHECK ((amount IS NULL) = (currency IS NULL)),
    -- never two blocks of one court at overlapping times
    CONSTRAINT court_blocks_no_overlap EXCLUDE USING gist
        (resource_id WITH =, tsrange(block_date + start_time, block_date + end_time) WITH &&)
);
COMMENT ON TABLE court_blocks IS 'A court closed by its club for a time: maintenance, a lesson, an event or a desk booking.';
COMMENT ON COLUMN court_blocks.resource_id IS 'The court closed.';
COMMENT ON COLUMN court_blocks.block_date IS 'Local date at the venue.';
COMMENT ON COLUMN court_blocks.start_time IS 'Local start time at the venue.';
COMMENT ON COLUMN court_blocks.end_time IS 'Local end time at the venue; 24:00:00 is the end of the day.';
COMMENT ON COLUMN court_blocks.kind IS 'MAINTENANCE, LESSON, EVENT or DESK (a walk-in customer booked at the desk).';
COMMENT ON COLUMN court_blocks.note IS 'What the club wrote; told to the players of matches the block cancelled.';
COMMENT ON COLUMN court_blocks.customer_name IS 'DESK: the customer booked.';
COMMENT ON COLUMN court_blocks.amount IS 'DESK: what the customer paid at the desk, exact.';
COMMENT ON COLUMN court_blocks.currency IS 'ISO 4217 code of amount.';
COMMENT ON COLUMN court_blocks.created_by IS 'Who made the block.';
COMMENT ON COLUMN court_blocks.created_at IS 'Creation time.';
CREATE INDEX court_blocks_created_by ON court_blocks (created_by);

-- the club calls a match off: every paid share back in full, nobody's reliability touched
ALTER TABLE match_requests DROP CONSTRAINT IF EXISTS match_requests_cancel_reason_check;
ALTER TABLE match_requests ADD CONSTRAINT match_requests_cancel_reason_check
    CHECK (cancel_reason IN ('ORGANIZER', 'PAYMENT_EXPIRED', 'NOT_FILLED', 'CLUB'));
COMMENT ON COLUMN match_requests.cancel_reason IS
    'ORGANIZER, PAYMENT_EXPIRED, NOT_FILLED or CLUB (called off by the venue); set when CANCELLED.';
ALTER TABLE match_requests ADD COLUMN cancel_note text;
COMMENT ON COLUMN match_requests.cancel_note IS
    'CLUB: the reason the venue gave, told to the players.';

INSERT INTO match_transitions (from_status, event, to_status, cancel_reason) VALUES
    ('PENDING_PAYMENT', 'CLUB_CANCEL', 'CANCELLED', 'CLUB'),
    ('OPEN',            'CLUB_CANCEL', 'CANCELLED', 'CLUB'),
    ('MATCHED',         'CLUB_CANCEL', 'CANCELLED', 'CLUB'),
    ('CONFIRMED',       'CLUB_CANCEL', 'CANCELLED', 'CLUB');
COMMENT ON COLUMN match_transitions.event IS
    'What happened: HOLD, PAY, EXPIRE_HOLD, JOIN, LEAVE, ABSENCE, CHECKIN, CANCEL, CANCEL_UNFILLED, CLUB_CANCEL, COMPLETE.';

-- who checked a player in at the desk, for a player without a phone
ALTER TABLE match_players ADD COLUMN checked_in_by uuid REFERENCES users (id);
COMMENT ON COLUMN match_players.checked_in_by IS
    'When checked in at the desk: who did it (NULL: the player, by GPS).';
