-- 0016_delivery: the columns of the delivery of the notifications outbox to a webhook by
-- cron/deliver.c: the attempts made, the lease of an attempt under way or the backoff after a
-- failed one (next_attempt_at), the last error, and the dead state after the last attempt,
-- which the operator sees and releases; and an index of the due notifications. Delivery is at
-- least once: a deliverer that dies between sending and reporting leaves the lease to run
-- out, and the notification is sent again.
-- The rules over these columns: sql/areas/50_notifications.sql.

ALTER TABLE notifications
    ADD COLUMN attempts integer NOT NULL DEFAULT 0
        CONSTRAINT notifications_attempts_check CHECK (attempts >= 0),
    ADD COLUMN next_attempt_at timestamptz,
    ADD COLUMN last_error text,
    ADD COLUMN dead_at timestamptz,
    ADD CONSTRAINT notifications_delivered_or_dead CHECK (delivered_at IS NULL OR dead_at IS NULL);
COMMENT ON COLUMN notifications.attempts IS
    'Delivery attempts so far (each claim by a deliverer counts one).';
COMMENT ON COLUMN notifications.next_attempt_at IS
    'Not to be sent before this instant: the lease of an attempt under way, or the backoff after a failed one; NULL: due since created_at.';
COMMENT ON COLUMN notifications.last_error IS
    'Why the last failed attempt failed (HTTP status or transport error).';
COMMENT ON COLUMN notifications.dead_at IS
    'When the last allowed attempt failed; no deliverer sends it until the operator releases it (notifications_retry_dead).';
COMMENT ON COLUMN notifications.delivered_at IS
    'When the webhook answered 2xx to it (cron/deliver.c).';

-- the due ones, oldest first; replaces the index on created_at of undelivered rows
DROP INDEX notifications_undelivered_idx;
CREATE INDEX notifications_due_idx ON notifications ((coalesce(next_attempt_at, created_at)))
    WHERE delivered_at IS NULL AND dead_at IS NULL;
