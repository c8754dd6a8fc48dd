-- The sweeper's rules: what time alone decides, applied in batches by cron/sweep.c.
--
-- Each sweep_* function claims at most p_limit rows that time has decided, with FOR UPDATE
-- SKIP LOCKED, and applies to them the transition that owns the change (in
-- sql/areas/60_lifecycle.sql, 65_places.sql or 75_results.sql), inside the transaction the
-- sweeper commits per batch. Rows another transaction holds are skipped: two sweepers share
-- the work, and a row an API request holds is left for the next run. The transitions are
-- guarded, and refunds and reliability events unique, so nothing is handled twice.
-- cron/sweep.c runs each rule until a batch claims fewer than its limit, and reads the first
-- number a rule answers as the rows it claimed; a rule that also reports what it did answers
-- that second.
--
-- The API never depends on the sweeper: a lapsed hold or offer is read as what it is, and
-- the writes of a match settle what has lapsed in it first. The sweeper moves rows to the
-- state they would be read as, and applies what waits for time (a completion's reliability,
-- a closed hand-over's deferred penalty, an undisputed result's rating). Its rules, in the
-- order cron/sweep.c runs them: 1 expired holds, 2 unfilled matches, 3 completion, 4 stale
-- invitations, 5 lapsed offers, 6 undisputed results, 7 old idempotency keys (its eighth,
-- the kept free slots, is free_slot_dates_keep in sql/areas/30_slots.sql).

-- Sweeper rule 2: a batch of matches still OPEN at their start, cancelled as NOT_FILLED with
-- every player refunded and told (match_cancel_unfilled); (claimed, invitations expired).
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

-- Sweeper rule 4: a batch of PENDING invitations the other transitions did not end, of
-- matches that are not OPEN any more or have started -> EXPIRED.
CREATE OR REPLACE FUNCTION sweep_invitations(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    swept integer;
BEGIN
    SELECT invitations_expire(ARRAY(
        SELECT i.id FROM invitations i JOIN match_requests m ON m.id = i.match_request_id
         WHERE i.status = 'PENDING' AND (m.status <> 'OPEN' OR m.starts_at <= p_now)
         LIMIT p_limit
           FOR UPDATE OF i SKIP LOCKED))
      INTO swept;
    RETURN swept;
END $$;
COMMENT ON FUNCTION sweep_invitations(integer, timestamptz) IS 'Sweeper rule 4: a batch of stale invitations.';

-- Sweeper rule 7: forgets a batch of Idempotency-Key answers older than a day (a retry is
-- answered from its key at least that long). The batch is chosen once, in a materialized
-- CTE, as notification_claim chooses its row (sql/areas/50_notifications.sql): a sub-select
-- in the DELETE's USING may run again for every outer row and take more than a batch.
CREATE OR REPLACE FUNCTION sweep_idempotency_keys(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    forgotten integer;
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
      INTO forgotten;
    RETURN forgotten;
END $$;
COMMENT ON FUNCTION sweep_idempotency_keys(integer, timestamptz) IS
    'Sweeper rule 7: deletes a batch of idempotency keys older than 24 hours.';

-- Sweeper rule 10: the answers kept for plain CGI that can no longer be served, a batch at a
-- time: slots answers (slot_answers_kept, sql/areas/20_versions.sql) that time has changed, a
-- write has (their validator is no longer the current one) or whose date is before UTC
-- yesterday; owner lists (owner_lists_kept, sql/areas/68_staff.sql) a write has changed, or
-- kept for 30 days (computed again when next asked). What is left is about one row per court
-- and date, and per caller's page, asked for since, so the tables stay the size of what is
-- being asked.
-- Returns how many were forgotten.
CREATE OR REPLACE FUNCTION sweep_kept_answers(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    slots integer;
    lists integer;
BEGIN
    WITH b AS MATERIALIZED (
        SELECT k.resource_id, k.booking_date
          FROM slot_answers_kept k
         CROSS JOIN LATERAL slot_validator_of(k.venue_id, k.resource_id, k.booking_date) w
         WHERE k.valid_until <= p_now
            OR k.booking_date < (p_now AT TIME ZONE 'UTC')::date - 1
            OR k.validator <> w.validator
         LIMIT p_limit
           FOR UPDATE OF k SKIP LOCKED),
    old AS (
        DELETE FROM slot_answers_kept k
         USING b
         WHERE k.resource_id = b.resource_id AND k.booking_date = b.booking_date
        RETURNING 1)
    SELECT count(*)::integer FROM old
      INTO slots;
    WITH b AS MATERIALIZED (
        SELECT k.user_id, k.as_owner, k.page_limit, k.page_cursor
          FROM owner_lists_kept k
         CROSS JOIN LATERAL owner_list_version_of(k.scopes) w
         WHERE k.kept_at < p_now - interval '30 days'
            OR k.validator <> w.validator
         LIMIT p_limit - slots
           FOR UPDATE OF k SKIP LOCKED),
    old AS (
        DELETE FROM owner_lists_kept k
         USING b
         WHERE (k.user_id, k.as_owner, k.page_limit, k.page_cursor)
             = (b.user_id, b.as_owner, b.page_limit, b.page_cursor)
        RETURNING 1)
    SELECT count(*)::integer FROM old
      INTO lists;
    RETURN slots + lists;
END $$;
COMMENT ON FUNCTION sweep_kept_answers(integer, timestamptz) IS
    'Sweeper rule 10: deletes a batch of kept answers (slots, owner lists) that can no longer be served.';

-- Sweeper rule 6: PENDING results of matches that ended result_confirm_after ago, which no
-- player disputed -> CONFIRMED and rated (match_result_rate, sql/areas/75_results.sql), the
-- players told RESULT_CONFIRMED, a batch at a time. Returns how many.
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
    'Sweeper rule 6: undisputed results confirmed and rated after result_confirm_after; returns how many.';

-- Sweeper rule 3: a batch of MATCHED or CONFIRMED matches past their end -> COMPLETED, with
-- attendance and no-shows recorded (match_complete); (completed, no-shows). Completions take
-- turns, each batch the matches that ended first (ties by id), so that scores move by
-- attendance in the order matches ended however the work is batched or shared: a second
-- sweeper waits at the lock for the first's batch, then takes the next ones. The lock is a
-- statement of its own, so that the claim's snapshot is taken after it and sees the batch
-- committed before.
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

-- Sweeper rule 5: a batch of the matches with lapsed offers, hand-overs or granted places,
-- or hand-over windows that closed, settled (match_offers_settle, sql/areas/65_places.sql).
-- settled: the matches claimed, which cron/sweep.c compares with the limit (a match may
-- have only a window to close, and no offer lapse); lapsed: the offers, hand-overs and
-- granted places that lapsed. The kinds are spelled out as the predicate of
-- invitations_open_offers_idx has them, so that the index serves the claim.
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
                         WHERE h.status = 'OPEN' AND h.window_ends_at <= p_now
                        UNION ALL
                        SELECT p.match_request_id FROM payments p
                         WHERE p.kind = 'PAYMENT' AND p.status = 'PENDING'
                           AND p.expires_at <= p_now)
         ORDER BY m.id LIMIT p_limit
           FOR UPDATE SKIP LOCKED
    LOOP
        settled := settled + 1;
        lapsed := lapsed + match_offers_settle(v_match, p_now);
    END LOOP;
END $$;
COMMENT ON FUNCTION sweep_offers(integer, timestamptz) IS
    'Sweeper rule 5: a batch of matches with lapsed offers, closed hand-over windows or lapsed shares settled; (claimed, lapsed).';

-- Sweeper rule 1: a batch of holds PENDING_PAYMENT past their window -> CANCELLED
-- (PAYMENT_EXPIRED), the organizer told. The claimed holds go to match_end as they are: the
-- claim is match_expire_holds' test, made on the rows it locks.
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
