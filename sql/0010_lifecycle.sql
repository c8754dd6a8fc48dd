-- 0010_lifecycle: the numbers and the allowed status changes of the match lifecycle, as data:
-- match_formats, match_policy and reliability_rules hold each number once, match_transitions
-- every allowed change of a match status, match_status_changes the history of them.
-- And a ledger of one payment per join: match_players gets an id, a payment names the join it
-- pays for (payments.entry_id), a refund the payment it gives back (payments.refund_of, at
-- most one refund per payment), and the rows already there are linked so. A player may leave
-- and rejoin any number of times, and for every join paid minus refunded is the player's share
-- while they are in the match (or absent, or the match was played), and zero after leaving
-- with a refund, an expired hold or a cancellation, except the organizer's share of a
-- cancellation less than a day ahead, which is kept.
-- The rules over these tables: sql/areas/60_lifecycle.sql.

-- ---- the numbers ------------------------------------------------------------------------

CREATE TABLE match_formats (
    format    text PRIMARY KEY,
    team_size integer NOT NULL CHECK (team_size BETWEEN 1 AND 2)
);
COMMENT ON TABLE match_formats IS 'Match formats and how many players a team has.';
COMMENT ON COLUMN match_formats.format IS 'TWO_VS_TWO, ONE_VS_ONE or AMERICANO.';
COMMENT ON COLUMN match_formats.team_size IS 'Players per team; a match has two teams.';
INSERT INTO match_formats VALUES ('ONE_VS_ONE', 1), ('TWO_VS_TWO', 2), ('AMERICANO', 2);
ALTER TABLE match_requests ADD CONSTRAINT match_requests_format_known
    FOREIGN KEY (format) REFERENCES match_formats (format);

CREATE TABLE match_policy (
    only_row                boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    leave_notice            interval NOT NULL,
    late_absence_window     interval NOT NULL,
    organizer_refund_notice interval NOT NULL,
    checkin_opens_before    interval NOT NULL,
    ban_no_shows            integer NOT NULL CHECK (ban_no_shows > 0),
    ban_window              interval NOT NULL,
    ban_length              interval NOT NULL
);
COMMENT ON TABLE match_policy IS 'The time limits and the ban rule of the match lifecycle (one row).';
COMMENT ON COLUMN match_policy.only_row IS 'Always true: the table has one row.';
COMMENT ON COLUMN match_policy.leave_notice IS 'Leaving (refunded) is allowed only more than this before the start.';
COMMENT ON COLUMN match_policy.late_absence_window IS 'An absence reported less than this before the start costs reliability.';
COMMENT ON COLUMN match_policy.organizer_refund_notice IS 'The organizer cancelling at least this far ahead is refunded.';
COMMENT ON COLUMN match_policy.checkin_opens_before IS 'Check-in opens this long before the start.';
COMMENT ON COLUMN match_policy.ban_no_shows IS 'No-shows within ban_window that ban automatic invitations.';
COMMENT ON COLUMN match_policy.ban_window IS 'How far back no-shows count towards a ban.';
COMMENT ON COLUMN match_policy.ban_length IS 'How long a ban lasts.';
INSERT INTO match_policy (leave_notice, late_absence_window, organizer_refund_notice,
                          checkin_opens_before, ban_no_shows, ban_window, ban_length)
VALUES ('48 hours', '24 hours', '24 hours', '30 minutes', 3, '90 days', '30 days');

CREATE TABLE reliability_rules (
    kind  text PRIMARY KEY,
    delta integer NOT NULL
);
COMMENT ON TABLE reliability_rules IS 'What each reliability event does to the 0..100 score.';
COMMENT ON COLUMN reliability_rules.kind IS 'NO_SHOW, LATE_ABSENCE or ATTENDED.';
COMMENT ON COLUMN reliability_rules.delta IS 'Change of the score, clamped to 0..100 when applied.';
INSERT INTO reliability_rules VALUES ('NO_SHOW', -25), ('LATE_ABSENCE', -10), ('ATTENDED', 5);
ALTER TABLE reliability_events ADD CONSTRAINT reliability_events_kind_known
    FOREIGN KEY (kind) REFERENCES reliability_rules (kind);
COMMENT ON COLUMN reliability_events.kind IS 'A kind of reliability_rules.';

-- ---- the transitions ------------------------------------------------------------------

CREATE TABLE match_transitions (
    from_status   text NOT NULL,
    event         text NOT NULL,
    to_status     text NOT NULL,
    cancel_reason text,
    PRIMARY KEY (from_status, event),
    CHECK ((to_status = 'CANCELLED') = (cancel_reason IS NOT NULL))
);
COMMENT ON TABLE match_transitions IS 'Every allowed change of a match status: from, event, to.';
COMMENT ON COLUMN match_transitions.from_status IS 'Status before; NONE for a new match.';
COMMENT ON COLUMN match_transitions.event IS 'What happened: HOLD, PAY, EXPIRE_HOLD, JOIN, LEAVE, ABSENCE, CHECKIN, CANCEL, CANCEL_UNFILLED, COMPLETE.';
COMMENT ON COLUMN match_transitions.to_status IS 'Status after.';
COMMENT ON COLUMN match_transitions.cancel_reason IS 'match_requests.cancel_reason set by a move to CANCELLED.';
INSERT INTO match_transitions VALUES
    ('NONE',            'HOLD',            'PENDING_PAYMENT', NULL),
    ('PENDING_PAYMENT', 'PAY',             'OPEN',            NULL),
    ('PENDING_PAYMENT', 'EXPIRE_HOLD',     'CANCELLED',       'PAYMENT_EXPIRED'),
    ('PENDING_PAYMENT', 'CANCEL',          'CANCELLED',       'ORGANIZER'),
    ('OPEN',            'JOIN',            'MATCHED',         NULL),
    ('OPEN',            'CANCEL',          'CANCELLED',       'ORGANIZER'),
    ('OPEN',            'CANCEL_UNFILLED', 'CANCELLED',       'NOT_FILLED'),
    ('MATCHED',         'LEAVE',           'OPEN',            NULL),
    ('MATCHED',         'ABSENCE',         'OPEN',            NULL),
    ('MATCHED',         'CHECKIN',         'CONFIRMED',       NULL),
    ('MATCHED',         'CANCEL',          'CANCELLED',       'ORGANIZER'),
    ('MATCHED',         'COMPLETE',        'COMPLETED',       NULL),
    ('CONFIRMED',       'COMPLETE',        'COMPLETED',       NULL);

CREATE TABLE match_status_changes (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    match_request_id uuid NOT NULL REFERENCES match_requests (id),
    event            text NOT NULL,
    from_status      text NOT NULL,
    to_status        text NOT NULL,
    changed_at       timestamptz NOT NULL,
    FOREIGN KEY (from_status, event) REFERENCES match_transitions (from_status, event)
);
COMMENT ON TABLE match_status_changes IS 'History of every match status change, in order.';
COMMENT ON COLUMN match_status_changes.match_request_id IS 'The match.';
COMMENT ON COLUMN match_status_changes.event IS 'The event of match_transitions that moved it.';
COMMENT ON COLUMN match_status_changes.from_status IS 'Status before.';
COMMENT ON COLUMN match_status_changes.to_status IS 'Status after.';
COMMENT ON COLUMN match_status_changes.changed_at IS 'When.';
CREATE INDEX match_status_changes_match_idx ON match_status_changes (match_request_id, id);

-- ---- the ledger: a payment per join, a refund per payment -------------------------------

ALTER TABLE match_players ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE match_players ADD CONSTRAINT match_players_pkey PRIMARY KEY (id);
COMMENT ON COLUMN match_players.id IS 'This join of the player to the match (a rejoin is a new row).';

ALTER TABLE payments ADD COLUMN entry_id uuid REFERENCES match_players (id);
ALTER TABLE payments ADD COLUMN refund_of uuid REFERENCES payments (id);
COMMENT ON COLUMN payments.entry_id IS 'PAYMENT: the join (match_players.id) it pays for.';
COMMENT ON COLUMN payments.refund_of IS 'REFUND: the payment it gives back.';
-- rows written before this migration: a payment pays for the player's latest join made before
-- it, a refund gives back the player's latest payment
UPDATE payments p
   SET entry_id = (SELECT mp.id FROM match_players mp
                    WHERE mp.match_request_id = p.match_request_id AND mp.player_id = p.player_id
                    ORDER BY mp.joined_at <= p.created_at DESC, mp.joined_at DESC LIMIT 1)
 WHERE p.kind = 'PAYMENT';
UPDATE payments p
   SET refund_of = (SELECT x.id FROM payments x
                     WHERE x.match_request_id = p.match_request_id AND x.player_id = p.player_id
                       AND x.kind = 'PAYMENT' AND x.status = 'PAID'
                     ORDER BY x.created_at DESC LIMIT 1)
 WHERE p.kind = 'REFUND';
ALTER TABLE payments ADD CONSTRAINT payments_payment_names_join
    CHECK ((kind = 'PAYMENT') = (entry_id IS NOT NULL));
ALTER TABLE payments ADD CONSTRAINT payments_refund_names_payment
    CHECK ((kind = 'REFUND') = (refund_of IS NOT NULL));
DROP INDEX payments_one_refund_idx;
CREATE UNIQUE INDEX payments_one_refund_per_payment ON payments (refund_of) WHERE kind = 'REFUND';
CREATE INDEX payments_entry_idx ON payments (entry_id) WHERE kind = 'PAYMENT';
