-- Notifications: the outbox the rules write to, and its delivery to the operator's webhook.
--
-- A rule that tells players something writes a notifications row per recipient in the
-- transaction of the change itself, so a notice exists exactly when its change committed.
-- notify is the helper for one event told to a list of players; the transitions that end,
-- complete or invite for many matches or players at once insert their rows in the statement
-- that makes the change. The writers are sql/areas/60_lifecycle.sql, 65_places.sql,
-- 75_results.sql and 95_sweeper.sql; json_notification is what a recipient reads.
--
-- cron/deliver.c sends them. notification_claim takes the oldest due row (FOR UPDATE SKIP
-- LOCKED), counts the attempt and leases the row until the attempt's deadline, in a
-- transaction of its own, so two deliverers never hold one notification at once. The
-- deliverer POSTs it and reports: notification_delivered on a 2xx (marked once), else
-- notification_failed, a retry after an exponential backoff or, after the last attempt, the
-- dead state, which the operator sees and releases (notifications_retry_dead). A deliverer
-- that dies between sending and reporting lets the lease run out, and the notification is
-- sent again: delivery is at least once, and the notification's id tells a repeat.

-- Tells players p_recipients of one event: a row each, a repeated id once.
CREATE OR REPLACE FUNCTION notify(p_recipients uuid[], p_type text, p_payload jsonb, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    INSERT INTO notifications (recipient_id, type, payload, created_at)
    SELECT DISTINCT r, p_type, p_payload, p_now FROM unnest(p_recipients) r;
END $$;
COMMENT ON FUNCTION notify(uuid[], text, jsonb, timestamptz) IS 'Writes one notification per recipient.';

-- A notification as its recipient reads it through the API.
CREATE OR REPLACE FUNCTION json_notification(n notifications) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN json_build_object(
        'id', n.id,
        'type', n.type,
        'payload', n.payload,
        'createdAt', api_ts(n.created_at),
        'readAt', api_ts(n.read_at));
COMMENT ON FUNCTION json_notification(notifications) IS
    'Notification object as its recipient sees it.';

-- The deliverer's report of a 2xx: delivered, and no further attempt or dead state.
CREATE OR REPLACE FUNCTION notification_delivered(p_id uuid) RETURNS boolean
    LANGUAGE plpgsql VOLATILE
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    delivered boolean;
BEGIN
    WITH marked AS (
        UPDATE notifications
           SET delivered_at = now(), next_attempt_at = NULL, dead_at = NULL
         WHERE id = p_id AND delivered_at IS NULL
        RETURNING 1)
    SELECT count(*) = 1 FROM marked
      INTO delivered;
    RETURN delivered;
END $$;
COMMENT ON FUNCTION notification_delivered(uuid) IS
    'Marks a notification delivered; false when it already was (it is marked once).';

-- The deliverer's report of failed attempt p_attempt: 'RETRY' (the next attempt after
-- p_backoff_seconds * 2^(attempt - 1), at most 6 hours), 'DEAD' (that was attempt
-- p_max_attempts), or NULL when the report is stale: the notification was delivered
-- meanwhile, or claimed again after this attempt's lease ran out.
CREATE OR REPLACE FUNCTION notification_failed(p_id uuid, p_attempt integer, p_error text,
                                               p_max_attempts integer, p_backoff_seconds integer)
    RETURNS text
    LANGUAGE plpgsql VOLATILE
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    outcome text;
BEGIN
    UPDATE notifications
       SET last_error = left(p_error, 500),
           dead_at = CASE WHEN attempts >= p_max_attempts THEN now() END,
           next_attempt_at = CASE WHEN attempts < p_max_attempts
               THEN now() + make_interval(secs => least(p_backoff_seconds::double precision
                                                        * 2 ^ least(attempts - 1, 30), 21600))
               END
     WHERE id = p_id AND delivered_at IS NULL AND dead_at IS NULL AND attempts = p_attempt
    RETURNING CASE WHEN dead_at IS NULL THEN 'RETRY' ELSE 'DEAD' END
      INTO outcome;
    RETURN outcome;
END $$;
COMMENT ON FUNCTION notification_failed(uuid, integer, text, integer, integer) IS
    'Records a failed attempt: RETRY after a backoff, DEAD after the last allowed one, NULL when stale.';

-- The operator's release of the dead notifications (deliver --retry-dead): each starts
-- again from its first attempt, due at once.
CREATE OR REPLACE FUNCTION notifications_retry_dead() RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    released integer;
BEGIN
    WITH released AS (
        UPDATE notifications
           SET dead_at = NULL, attempts = 0, next_attempt_at = NULL
         WHERE dead_at IS NOT NULL
        RETURNING 1)
    SELECT count(*)::integer FROM released
      INTO released;
    RETURN released;
END $$;
COMMENT ON FUNCTION notifications_retry_dead() IS
    'Releases every dead notification for a fresh round of attempts; returns how many.';

-- A deliverer's claim: the oldest due notification (never delivered, not dead, its next
-- attempt or its creation passed), leased for p_lease_seconds with the attempt counted.
-- The row is chosen once, in a materialized CTE, before anything is updated: a sub-select
-- in the UPDATE's FROM may be run again for every outer row of a nested loop, and each run,
-- skipping the row the statement had just locked, would claim the next one, so a single call
-- would lease every due notification while the deliverer sends only the first.
CREATE OR REPLACE FUNCTION notification_claim(p_lease_seconds integer)
    RETURNS TABLE (id uuid, attempt integer, body text)
    LANGUAGE plpgsql VOLATILE
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH due AS MATERIALIZED (
        SELECT d.id
          FROM notifications d
         WHERE d.delivered_at IS NULL AND d.dead_at IS NULL
           AND coalesce(d.next_attempt_at, d.created_at) <= now()
         ORDER BY coalesce(d.next_attempt_at, d.created_at)
         LIMIT 1
           FOR UPDATE SKIP LOCKED)
    UPDATE notifications n
       SET attempts = n.attempts + 1,
           next_attempt_at = now() + make_interval(secs => p_lease_seconds)
      FROM due, users u
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
END $$;
COMMENT ON FUNCTION notification_claim(integer) IS
    'Claims the oldest due notification for p_lease_seconds, counting the attempt; returns it with the body to POST, or no row when none is due.';
