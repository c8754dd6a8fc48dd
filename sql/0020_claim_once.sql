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
    LANGUAGE sql VOLATILE
BEGIN ATOMIC
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
END;

-- The sweeper's rule 5 had the same shape: a run could forget more than a batch of old keys
-- (all of them old, so nothing wrong was deleted); the batch is now chosen once too.
CREATE OR REPLACE FUNCTION sweep_idempotency_keys(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE sql
AS $$
    WITH b AS MATERIALIZED (
        SELECT user_id, key FROM idempotency_keys
         WHERE created_at < p_now - interval '24 hours'
         ORDER BY created_at LIMIT p_limit
           FOR UPDATE SKIP LOCKED),
    old AS (
        DELETE FROM idempotency_keys k
         USING b
         WHERE k.user_id = b.user_id AND k.key = b.key
        RETURNING 1)
    SELECT count(*)::integer FROM old;
$$;
