-- The one way to notify: one row per recipient of one event.
CREATE OR REPLACE FUNCTION notify(p_recipients uuid[], p_type text, p_payload jsonb, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    INSERT INTO notifications (recipient_id, type, payload, created_at)
    SELECT DISTINCT r, p_type, p_payload, p_now FROM unnest(p_recipients) r;
END $$;
COMMENT ON FUNCTION notify(uuid[], text, jsonb, timestamptz) IS 'Writes one notification per recipient.';

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

CREATE OR REPLACE FUNCTION notification_delivered(p_id uuid) RETURNS boolean
    LANGUAGE plpgsql VOLATILE
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE result_ boolean;
BEGIN
    WITH marked AS (
        UPDATE notifications
           SET delivered_at = now(), next_attempt_at = NULL, dead_at = NULL
         WHERE id = p_id AND delivered_at IS NULL
        RETURNING 1)
    SELECT count(*) = 1 FROM marked
      INTO result_;
    RETURN result_;
END $$;
COMMENT ON FUNCTION notification_delivered(uuid) IS
    'Marks a notification delivered; false when it already was (it is marked once).';

-- 'RETRY' (next attempt after p_backoff_seconds * 2^(attempt - 1), at most 6 hours), 'DEAD'
-- (that was attempt p_max_attempts), or NULL when the report is stale: the notification was
-- delivered meanwhile, or claimed again after this attempt's lease ran out.
CREATE OR REPLACE FUNCTION notification_failed(p_id uuid, p_attempt integer, p_error text,
                                               p_max_attempts integer, p_backoff_seconds integer)
    RETURNS text
    LANGUAGE plpgsql VOLATILE
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE result_ text;
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
      INTO result_;
    RETURN result_;
END $$;
COMMENT ON FUNCTION notification_failed(uuid, integer, text, integer, integer) IS
    'Records a failed attempt: RETRY after a backoff, DEAD after the last allowed one, NULL when stale.';

CREATE OR REPLACE FUNCTION notifications_retry_dead() RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE result_ integer;
BEGIN
    WITH released AS (
        UPDATE notifications
           SET dead_at = NULL, attempts = 0, next_attempt_at = NULL
         WHERE dead_at IS NOT NULL
        RETURNING 1)
    SELECT count(*)::integer FROM released
      INTO result_;
    RETURN result_;
END $$;
COMMENT ON FUNCTION notifications_retry_dead() IS
    'Releases every dead notification for a fresh round of attempts; returns how many.';

-- 0020_claim_once: a deliverer's claim takes one notification, whatever the plan.
--
-- notification_claim (0016) updated notifications FROM a sub-select of the oldest due row
-- (LIMIT 1 FOR UPDATE SKIP LOCKED). When the planner put that sub-select on the inner side
-- of a nested loop it ran again for every outer row, and each run, skipping the row this
-- very statement had just updated, locked and returned the next one: one call claimed every
-- due notification, leased them all and counted an attempt on each, while the deliverer
-- sent only the first. The others waited for their lease to run out (tests/59-deliver.bats
-- failed now and then: "delivered=1" of 3). The row is now chosen once, in a materialized
-- CTE, before anything is updated.
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
