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
DROP FUNCTION json_notification(notifications);

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

CREATE FUNCTION json_notification(n notifications) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN json_build_object(
        'id', n.id,
        'type', n.type,
        'payload', n.payload,
        'createdAt', api_ts(n.created_at),
        'readAt', api_ts(n.read_at));
COMMENT ON FUNCTION json_notification(notifications) IS
    'Notification object as its recipient sees it.';

CREATE FUNCTION notification_claim(p_lease_seconds integer)
    RETURNS TABLE (id uuid, attempt integer, body text)
    LANGUAGE sql VOLATILE
BEGIN ATOMIC
    UPDATE notifications n
       SET attempts = n.attempts + 1,
           next_attempt_at = now() + make_interval(secs => p_lease_seconds)
      FROM (SELECT d.id
              FROM notifications d
             WHERE d.delivered_at IS NULL AND d.dead_at IS NULL
               AND coalesce(d.next_attempt_at, d.created_at) <= now()
             ORDER BY coalesce(d.next_attempt_at, d.created_at)
             LIMIT 1
               FOR UPDATE SKIP LOCKED) due,
           users u
     WHERE n.id = due.id AND u.id = n.recipient_id
    -- the webhook's body: the notification, its recipient as the identity provider knows
    -- them (issuer and subject, to look up an address), nothing that changes between attempts
    RETURNING n.id, n.attempts,
        json_build_object(
            'id', n.id,
            'type', n.type,
            'createdAt', api_ts(n.created_at),
            'recipient', json_build_object('id', u.id, 'issuer', u.issuer, 'subject', u.subject),
            'payload', n.payload)::text;
END;
COMMENT ON FUNCTION notification_claim(integer) IS
    'Claims the oldest due notification for p_lease_seconds, counting the attempt; returns it with the body to POST, or no row when none is due.';

CREATE FUNCTION notification_delivered(p_id uuid) RETURNS boolean
    LANGUAGE sql VOLATILE
BEGIN ATOMIC
    WITH marked AS (
        UPDATE notifications
           SET delivered_at = now(), next_attempt_at = NULL, dead_at = NULL
         WHERE id = p_id AND delivered_at IS NULL
        RETURNING 1)
    SELECT count(*) = 1 FROM marked;
END;
COMMENT ON FUNCTION notification_delivered(uuid) IS
    'Marks a notification delivered; false when it already was (it is marked once).';

-- 'RETRY' (next attempt after p_backoff_seconds * 2^(attempt - 1), at most 6 hours), 'DEAD'
-- (that was attempt p_max_attempts), or NULL when the report is stale: the notification was
-- delivered meanwhile, or claimed again after this attempt's lease ran out.
CREATE FUNCTION notification_failed(p_id uuid, p_attempt integer, p_error text,
                                    p_max_attempts integer, p_backoff_seconds integer)
    RETURNS text
    LANGUAGE sql VOLATILE
BEGIN ATOMIC
    UPDATE notifications
       SET last_error = left(p_error, 500),
           dead_at = CASE WHEN attempts >= p_max_attempts THEN now() END,
           next_attempt_at = CASE WHEN attempts < p_max_attempts
               THEN now() + make_interval(secs => least(p_backoff_seconds::double precision
                                                        * 2 ^ least(attempts - 1, 30), 21600))
               END
     WHERE id = p_id AND delivered_at IS NULL AND dead_at IS NULL AND attempts = p_attempt
    RETURNING CASE WHEN dead_at IS NULL THEN 'RETRY' ELSE 'DEAD' END;
END;
COMMENT ON FUNCTION notification_failed(uuid, integer, text, integer, integer) IS
    'Records a failed attempt: RETRY after a backoff, DEAD after the last allowed one, NULL when stale.';

CREATE FUNCTION notifications_retry_dead() RETURNS integer
    LANGUAGE sql VOLATILE
BEGIN ATOMIC
    WITH released AS (
        UPDATE notifications
           SET dead_at = NULL, attempts = 0, next_attempt_at = NULL
         WHERE dead_at IS NOT NULL
        RETURNING 1)
    SELECT count(*)::integer FROM released;
END;
COMMENT ON FUNCTION notifications_retry_dead() IS
    'Releases every dead notification for a fresh round of attempts; returns how many.';
