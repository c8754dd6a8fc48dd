-- 0050_payments: the payment provider's side of the ledger (rules: sql/areas/92_payments.sql).
-- A share paid online is a PaymentIntent at the provider, named by the row; a refund of it is
-- a refund there, sent by the sweeper, PENDING until the provider says it succeeded or
-- failed. Every event the provider sends is applied once, by its id.
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check
    CHECK (status IN ('PENDING', 'PAID', 'CANCELLED', 'REFUNDED', 'FAILED'));
COMMENT ON COLUMN payments.status IS
    'PAYMENT: PENDING, PAID or CANCELLED; REFUND: PENDING (to be paid back by the provider), REFUNDED or FAILED.';

ALTER TABLE payments ADD COLUMN expires_at timestamptz;
COMMENT ON COLUMN payments.expires_at IS
    'PAYMENT of a join: until when its pending share may be paid; past it the place is freed (an organizer''s share is the hold''s, match_requests.expires_at).';
-- the shares owed of a match (a read asks whether one is past its window), and the sweeper's
CREATE INDEX payments_share_owed ON payments (match_request_id, expires_at)
    WHERE kind = 'PAYMENT' AND status = 'PENDING' AND expires_at IS NOT NULL;

-- a join whose share was not paid in time is ended UNPAID (sql/areas/92_payments.sql)
ALTER TABLE match_players DROP CONSTRAINT IF EXISTS match_players_left_reason_check;
ALTER TABLE match_players ADD CONSTRAINT match_players_left_reason_check
    CHECK (left_reason IN ('LEFT', 'ABSENT', 'UNPAID'));
COMMENT ON COLUMN match_players.left_reason IS
    'LEFT (more than 48 h ahead, refunded), ABSENT (late withdrawal) or UNPAID (the share not paid within its window).';

ALTER TABLE payments ADD COLUMN provider text CHECK (provider IN ('stripe'));
ALTER TABLE payments ADD COLUMN provider_status text;
ALTER TABLE payments ADD COLUMN client_secret text;
ALTER TABLE payments ADD COLUMN attempts integer NOT NULL DEFAULT 0;
ALTER TABLE payments ADD COLUMN next_attempt_at timestamptz;
ALTER TABLE payments ADD COLUMN last_error text;
COMMENT ON COLUMN payments.provider IS
    'The payment provider that moves this money; NULL: none (PAYMENT_PROVIDER=none, no money taken online).';
COMMENT ON COLUMN payments.provider_status IS
    'The status the provider last gave its object (a PaymentIntent''s or a refund''s), as it words it.';
COMMENT ON COLUMN payments.client_secret IS
    'PAYMENT: the secret the payer''s client confirms the PaymentIntent with, while it is PENDING.';
COMMENT ON COLUMN payments.attempts IS
    'Calls made to the provider for this row by the sweeper (a refund sent, an intent cancelled).';
COMMENT ON COLUMN payments.next_attempt_at IS
    'When the sweeper calls the provider for this row again after a failed call.';
COMMENT ON COLUMN payments.last_error IS
    'Why the provider''s last call for this row failed, as the provider or the connection said.';
COMMENT ON COLUMN payments.provider_ref IS
    'The provider''s object: a PaymentIntent (pi_...) for a PAYMENT, a refund (re_...) for a REFUND.';

CREATE UNIQUE INDEX payments_provider_object ON payments (provider, provider_ref)
    WHERE provider_ref IS NOT NULL;
-- the sweeper's work: refunds to send, intents of freed places to cancel
CREATE INDEX payments_provider_due ON payments (next_attempt_at)
    WHERE provider IS NOT NULL AND ((kind = 'REFUND' AND status = 'PENDING')
                                    OR (kind = 'PAYMENT' AND status = 'CANCELLED'
                                        AND provider_status IS DISTINCT FROM 'canceled'));

CREATE TABLE payment_events (
    id          text PRIMARY KEY,
    provider    text NOT NULL,
    type        text NOT NULL,
    object_id   text,
    payment_id  uuid REFERENCES payments (id),
    outcome     text NOT NULL,
    received_at timestamptz NOT NULL
);
COMMENT ON TABLE payment_events IS
    'Every event of the payment provider applied, once each by its id, whatever its order or repetition.';
COMMENT ON COLUMN payment_events.id IS 'The provider''s event id (evt_...).';
COMMENT ON COLUMN payment_events.type IS 'The event type, as the provider words it (payment_intent.succeeded).';
COMMENT ON COLUMN payment_events.object_id IS 'The provider''s object the event is about.';
COMMENT ON COLUMN payment_events.payment_id IS 'The ledger row it was about, when there is one.';
COMMENT ON COLUMN payment_events.outcome IS
    'What applying it did: PAID, LATE_PAYMENT, AMOUNT_MISMATCH, REFUNDED, REFUND_FAILED, RECORDED, UNKNOWN, IGNORED.';
COMMENT ON COLUMN payment_events.received_at IS 'When it was applied.';

CREATE TABLE payment_issues (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    payment_id  uuid REFERENCES payments (id),
    kind        text NOT NULL CHECK (kind IN ('AMOUNT_MISMATCH', 'REFUND_FAILED', 'UNKNOWN_CHARGE')),
    detail      jsonb NOT NULL,
    created_at  timestamptz NOT NULL,
    resolved_at timestamptz,
    resolved_by uuid REFERENCES users (id),
    resolution  text,
    CHECK ((resolved_at IS NULL) = (resolution IS NULL))
);
COMMENT ON TABLE payment_issues IS
    'What an administrator must look at: money at the provider that the ledger does not match.';
COMMENT ON COLUMN payment_issues.kind IS
    'AMOUNT_MISMATCH (a payment of another amount or currency than the share), REFUND_FAILED, UNKNOWN_CHARGE.';
COMMENT ON COLUMN payment_issues.detail IS 'What the provider said, and what the ledger expected.';
COMMENT ON COLUMN payment_issues.resolved_at IS 'When an administrator settled it; NULL while open.';
COMMENT ON COLUMN payment_issues.resolved_by IS 'The administrator who settled it.';
COMMENT ON COLUMN payment_issues.resolution IS 'What the administrator did about it, in their words.';
CREATE INDEX payment_issues_open ON payment_issues (created_at) WHERE resolved_at IS NULL;

-- a match request shown to one of its players carries their own share (myPayment): the two
-- JSON functions gain the player they are shown to (sql/areas/90_json.sql)
DROP FUNCTION IF EXISTS json_match_request(match_requests, boolean);
DROP FUNCTION IF EXISTS match_request_json(uuid);
