CREATE OR REPLACE FUNCTION sweep_unfilled(p_limit integer, p_now timestamptz DEFAULT now(),
                                          OUT unfilled integer, OUT invitations_expired integer)
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    SELECT cardinality(ended), invitations_expired FROM match_cancel_unfilled(ARRAY(
        SELECT id FROM match_requests
         WHERE status = 'OPEN' AND starts_at <= p_now
         ORDER BY starts_at LIMIT p_limit
           FOR UPDATE SKIP LOCKED), p_now)
      INTO unfilled, invitations_expired;
END $$;
COMMENT ON FUNCTION sweep_unfilled(integer, timestamptz) IS 'Sweeper rule 2: a batch of matches not filled by their start.';

-- Invitations the other transitions did not end: of matches no longer OPEN, or started.
CREATE OR REPLACE FUNCTION sweep_invitations(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE result_ integer;
BEGIN
    SELECT invitations_expire(ARRAY(
        SELECT i.id FROM invitations i JOIN match_requests m ON m.id = i.match_request_id
         WHERE i.status = 'PENDING' AND (m.status <> 'OPEN' OR m.starts_at <= p_now)
         LIMIT p_limit
           FOR UPDATE OF i SKIP LOCKED))
      INTO result_;
    RETURN result_;
END $$;
COMMENT ON FUNCTION sweep_invitations(integer, timestamptz) IS 'Sweeper rule 4: a batch of stale invitations.';

-- The sweeper's rule 5 had the same shape: a run could forget more than a batch of old keys
-- (all of them old, so nothing wrong was deleted); the batch is now chosen once too.
CREATE OR REPLACE FUNCTION sweep_idempotency_keys(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE result_ integer;
BEGIN
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
    SELECT count(*)::integer FROM old
      INTO result_;
    RETURN result_;
END $$;
COMMENT ON FUNCTION sweep_idempotency_keys(integer, timestamptz) IS
    'Sweeper rule 5: deletes a batch of idempotency keys older than 24 hours.';

-- Sweeper rule: PENDING results of matches that ended result_confirm_after ago -> CONFIRMED
-- and rated, a batch at a time. Returns how many.
CREATE OR REPLACE FUNCTION sweep_results(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_match uuid;
    n integer := 0;
BEGIN
    FOR v_match IN
        SELECT r.match_request_id FROM match_results r
          JOIN match_requests m ON m.id = r.match_request_id
         WHERE r.status = 'PENDING'
           AND m.ends_at + (SELECT result_confirm_after FROM match_policy) <= p_now
         ORDER BY r.match_request_id LIMIT p_limit
           FOR UPDATE OF r SKIP LOCKED
    LOOP
        UPDATE match_results SET status = 'CONFIRMED', answered_at = p_now
         WHERE match_request_id = v_match;
        PERFORM match_result_rate(v_match, p_now);
        PERFORM notify(match_active_players(v_match), 'RESULT_CONFIRMED',
                       jsonb_build_object('matchRequestId', v_match), p_now);
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;
COMMENT ON FUNCTION sweep_results(integer, timestamptz) IS
    'Sweeper rule: undisputed results confirmed and rated after result_confirm_after; returns how many.';

-- (0015, restated in PL/pgSQL) two statements: the lock, then the matches
CREATE OR REPLACE FUNCTION sweep_completed(p_limit integer, p_now timestamptz DEFAULT now(),
                                           OUT completed integer, OUT no_shows integer)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('sweep_completed'));
    SELECT * INTO completed, no_shows FROM match_complete(ARRAY(
        SELECT id FROM match_requests
         WHERE status IN ('MATCHED', 'CONFIRMED') AND ends_at <= p_now
         ORDER BY ends_at, id LIMIT p_limit
           FOR UPDATE SKIP LOCKED), p_now);
END $$;
COMMENT ON FUNCTION sweep_completed(integer, timestamptz) IS 'Sweeper rule 3: a batch of finished matches.';

-- (0025, restated with two counts) Sweeper rule: the matches with lapsed offers, hand-overs
-- or granted places, or hand-over windows that closed, settled (match_offers_settle).
-- settled: the matches claimed; lapsed: the offers, hand-overs and granted places that
-- lapsed. (The kinds are spelled out as invitations_open_offers_idx's predicate has them.)
CREATE OR REPLACE FUNCTION sweep_offers(p_limit integer, p_now timestamptz DEFAULT now(),
                                        OUT settled integer, OUT lapsed integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    v_match uuid;
BEGIN
    settled := 0;
    lapsed := 0;
    FOR v_match IN
        SELECT m.id FROM match_requests m
         WHERE m.id IN (SELECT i.match_request_id FROM invitations i
                         WHERE i.kind IN ('OFFER', 'HANDOVER', 'PLACE') AND i.status = 'PENDING'
                           AND i.expires_at <= p_now
                        UNION ALL
                        SELECT h.match_request_id FROM match_handovers h
                         WHERE h.status = 'OPEN' AND h.window_ends_at <= p_now)
         ORDER BY m.id LIMIT p_limit
           FOR UPDATE SKIP LOCKED
    LOOP
        settled := settled + 1;
        lapsed := lapsed + match_offers_settle(v_match, p_now);
    END LOOP;
END $$;
COMMENT ON FUNCTION sweep_offers(integer, timestamptz) IS
    'Sweeper rule 5: a batch of matches with lapsed offers or closed hand-over windows settled; (claimed, lapsed).';

-- (0010, restated; a kept generic plan as in 0027) the claimed holds are ended as they are:
-- the claim is match_expire_holds' test, made on rows it locks.
CREATE OR REPLACE FUNCTION sweep_expired_holds(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN cardinality(ended) FROM match_end(ARRAY(
        SELECT id FROM match_requests
         WHERE status = 'PENDING_PAYMENT' AND expires_at <= p_now
         ORDER BY expires_at LIMIT p_limit
           FOR UPDATE SKIP LOCKED), 'EXPIRE_HOLD', p_now);
END $$;
COMMENT ON FUNCTION sweep_expired_holds(integer, timestamptz) IS 'Sweeper rule 1: a batch of expired holds.';
