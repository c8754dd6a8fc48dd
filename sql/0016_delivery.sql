-- 0016_delivery: the notifications outbox delivered to a webhook by cron/deliver.c.
--
-- A deliverer claims one due notification at a time (notification_claim): the claim counts
-- the attempt and leases the row until the attempt's deadline has passed, in a transaction
-- of its own that takes the row with FOR UPDATE SKIP LOCKED, so two deliverers never hold the
-- same notification at once. It then POSTs it and reports the outcome: delivered on a 2xx
-- (notification_delivered, once), otherwise a retry after an exponential backoff or, after
-- the last attempt, the dead state (notification_failed), which the operator sees and
-- releases (notifications_retry_dead). A deliverer that dies between sending and reporting
-- leaves the lease to run out: the notification is sent again (at least once).

-- a function over the table's row type blocks adding columns: json_notification (0007) is
-- dropped and made again as it was around the change

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
