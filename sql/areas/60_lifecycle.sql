-- The life of a match and of a player in it: one function per transition.
--
-- Every change of the match tables (match_requests, match_players, invitations, payments,
-- reliability and the notifications they cause) goes through one function per transition;
-- the request handlers and the sweeper (sql/areas/95_sweeper.sql) call them and write nothing
-- themselves. Nothing is deleted: what ends changes status. Each function locks what it
-- changes (a match's row first), checks its preconditions, writes the state, the ledger rows
-- and the notifications, and fails with a stable problem code (lifecycle_fail):
--     RAISE ... ERRCODE 'CRnnn' (nnn the HTTP status), MESSAGE the code, DETAIL the text
-- which common/sql.c turns into the answer; a failed function has written nothing. Every
-- function takes p_now, defaulting to now(): the service never passes it, the lifecycle model
-- test (tests/lifecycle/) passes its own clock. The rules' numbers stand once each, in
-- match_formats, match_policy and reliability_rules; the allowed status changes in
-- match_transitions, which every status change consults (match_move) and records in
-- match_status_changes.
--
-- The ledger: a payment is a row per join (payments.entry_id names the match_players row it
-- pays for), a refund names the payment it gives back (payments.refund_of, at most one per
-- payment). So a player may leave and rejoin any number of times, and for every join paid
-- minus refunded is the player's share while they are in the match (or absent, or it was
-- played), and zero after a leave, a refilled hand-over, an expired hold or a cancellation,
-- but the organizer's share of a cancellation less than organizer_refund_notice ahead, which
-- is kept.
--
-- Uses resource_slots (sql/areas/30_slots.sql), eligible_players (sql/areas/40_players.sql),
-- notify (sql/areas/50_notifications.sql), the fair-use checks (sql/areas/55_fair_use.sql),
-- match_new_terms (sql/areas/70_open_matches.sql) and json_match_request
-- (sql/areas/90_json.sql); hands freed and offered places to the waiting list, hand-overs and
-- place requests of sql/areas/65_places.sql.

-- Keeps the team counters of match_requests in step with match_players; the CHECK on the
-- counters then refuses a player too many even if two joins race. (Its triggers stand after
-- match_join_locked.)
CREATE OR REPLACE FUNCTION match_players_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND NEW.left_at IS NULL THEN
        UPDATE match_requests
           SET team_a_count = team_a_count + (NEW.team = 'TEAM_A')::int,
               team_b_count = team_b_count + (NEW.team = 'TEAM_B')::int
         WHERE id = NEW.match_request_id;
    ELSIF TG_OP = 'UPDATE' AND OLD.left_at IS NULL AND NEW.left_at IS NOT NULL THEN
        UPDATE match_requests
           SET team_a_count = team_a_count - (OLD.team = 'TEAM_A')::int,
               team_b_count = team_b_count - (OLD.team = 'TEAM_B')::int
         WHERE id = OLD.match_request_id;
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION match_players_count() IS
    'Maintains match_requests.team_a_count / team_b_count but for the organizer''s place, '
    'which match_hold writes with the match.';

-- ---- building blocks: failing, moving a status, refunds, invitations' ends ------------------

-- Fails the transition: the caller's transaction rolls back and the client is answered
-- p_status with code p_code (common/sql.c).
CREATE OR REPLACE FUNCTION lifecycle_fail(p_status integer, p_code text, p_detail text) RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'CR' || p_status::text, MESSAGE = p_code, DETAIL = p_detail;
END $$;
COMMENT ON FUNCTION lifecycle_fail(integer, text, text) IS
    'Raises SQLSTATE CR<status> with the problem code as message and the detail.';

-- The same with members the problem adds to its body (a JSON object: {"matchRequestIds":
-- [...]}, say), carried as the error's HINT.
CREATE OR REPLACE FUNCTION lifecycle_fail_with(p_status integer, p_code text, p_detail text,
                                               p_members jsonb) RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'CR' || p_status::text, MESSAGE = p_code, DETAIL = p_detail,
                          HINT = p_members::text;
END $$;
COMMENT ON FUNCTION lifecycle_fail_with(integer, text, text, jsonb) IS
    'Raises SQLSTATE CR<status> with the problem code, the detail and members of its body.';

-- Moves each of p_ids whose status has a transition for p_event to that transition's status
-- (and cancel reason), and records it. Returns the ids moved; the others are left alone.
CREATE OR REPLACE FUNCTION match_move(p_ids uuid[], p_event text, p_now timestamptz)
    RETURNS SETOF uuid
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN QUERY
    WITH moved AS (
        UPDATE match_requests m
           SET status = t.to_status, cancel_reason = t.cancel_reason, updated_at = p_now
          FROM match_transitions t
         WHERE m.id = ANY (p_ids) AND t.from_status = m.status AND t.event = p_event
        RETURNING m.id, t.from_status, t.to_status),
    logged AS (
        INSERT INTO match_status_changes (match_request_id, event, from_status, to_status, changed_at)
        SELECT id, p_event, from_status, to_status, p_now FROM moved)
    SELECT id FROM moved;
END $$;
COMMENT ON FUNCTION match_move(uuid[], text, timestamptz) IS
    'Applies event to the matches it is a transition of (match_transitions), recording each change.';

-- Ids of the players in match p_match (their join not ended), but p_except when given, in
-- id order: the recipients of a match's notices.
CREATE OR REPLACE FUNCTION match_active_players(p_match uuid, p_except uuid DEFAULT NULL)
    RETURNS uuid[]
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    players uuid[];
BEGIN
    SELECT COALESCE(array_agg(player_id ORDER BY player_id), '{}')
      FROM match_players
     WHERE match_request_id = p_match AND left_at IS NULL
       AND player_id IS DISTINCT FROM p_except
      INTO players;
    RETURN players;
END $$;
COMMENT ON FUNCTION match_active_players(uuid, uuid) IS 'Ids of the players in a match, optionally but one.';

-- Refunds each given payment that is PAID and not refunded yet, in full, once (the unique
-- index on refund_of is the last guard). Returns what was refunded. A payment the provider
-- took is paid back by it: its refund is PENDING until the sweeper has sent it and the
-- provider has said it succeeded (sql/areas/92_payments.sql); one taken at the desk
-- (no provider) is REFUNDED at once.
CREATE OR REPLACE FUNCTION payments_refund(p_payments uuid[], p_now timestamptz)
    RETURNS TABLE (payment_id uuid, player_id uuid, match_request_id uuid, amount numeric)
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
                          refund_of, provider, next_attempt_at, created_at, updated_at)
    SELECT p.match_request_id, p.player_id, 'REFUND', p.amount, p.currency,
           CASE WHEN p.provider IS NULL THEN 'REFUNDED' ELSE 'PENDING' END,
           p.id, p.provider, CASE WHEN p.provider IS NOT NULL THEN p_now END, p_now, p_now
      FROM payments p
     WHERE p.id = ANY (p_payments) AND p.kind = 'PAYMENT' AND p.status = 'PAID' AND p.amount > 0
       AND NOT EXISTS (SELECT 1 FROM payments r WHERE r.refund_of = p.id)
    ON CONFLICT (refund_of) WHERE kind = 'REFUND' DO NOTHING
    RETURNING refund_of, player_id, match_request_id, amount;
END $$;
COMMENT ON FUNCTION payments_refund(uuid[], timestamptz) IS
    'Refunds each PAID payment given, in full and at most once; returns the refunds.';

-- Ends each given invitation that is still PENDING as EXPIRED; returns how many.
CREATE OR REPLACE FUNCTION invitations_expire(p_ids uuid[])
    RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    expired integer;
BEGIN
    WITH e AS (UPDATE invitations SET status = 'EXPIRED'
                WHERE id = ANY (p_ids) AND status = 'PENDING' RETURNING 1)
    SELECT count(*)::integer FROM e
      INTO expired;
    RETURN expired;
END $$;
COMMENT ON FUNCTION invitations_expire(uuid[]) IS 'PENDING invitations among the ids -> EXPIRED; returns the count.';

-- Pending invitations of the given matches.
CREATE OR REPLACE FUNCTION match_pending_invitations(p_matches uuid[])
    RETURNS uuid[]
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    pending uuid[];
BEGIN
    SELECT COALESCE(array_agg(id), '{}') FROM invitations
     WHERE match_request_id = ANY (p_matches) AND status = 'PENDING'
      INTO pending;
    RETURN pending;
END $$;
COMMENT ON FUNCTION match_pending_invitations(uuid[]) IS 'Ids of the PENDING invitations of some matches.';

-- ---- reliability: scores, no-shows and bans -------------------------------------------------

-- A score moved by one more event, from p_start when there is no score yet: plus the
-- event's delta, clamped to 0..100.
CREATE OR REPLACE FUNCTION reliability_step(p_score integer, p_start integer, p_delta integer)
    RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN least(100, greatest(0, COALESCE(p_score, p_start) + p_delta));
COMMENT ON FUNCTION reliability_step(integer, integer, integer) IS
    'A reliability score moved by one more event delta (from the start given), clamped to 0..100.';

-- A score moved from a start by events one after another, in the order given.
CREATE OR REPLACE AGGREGATE reliability_fold(integer, integer) (SFUNC = reliability_step, STYPE = integer);
COMMENT ON AGGREGATE reliability_fold(integer, integer) IS
    'reliability_fold(start, delta ORDER BY ...): the score after the deltas one by one, each clamped.';

-- Records reliability events (each (player, match, kind) once) and applies them: each
-- player's score moves by each new event in turn, clamped to 0..100 each time, in the order
-- the matches ended (then by match and kind), so a score does not depend on how the sweeper
-- batches matches (a sum clamped once would: from 100, +5 and -25 give 80 in one batch, 75
-- in two). No-shows counted, a ban when the no-shows within the policy window reach the
-- limit, each no-show notified with the new score. Players without a profile get one.
-- Player rows are locked in id order, so concurrent callers wait for each other instead of
-- deadlocking; the second statement runs on a snapshot taken after those locks, so a
-- concurrent no-show is never missed. Returns the no-shows recorded.
CREATE OR REPLACE FUNCTION reliability_apply(p_players uuid[], p_matches uuid[], p_kinds text[],
                                             p_now timestamptz)
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_players uuid[];
    v_matches uuid[];
    v_kinds   text[];
    v_no_shows integer;
BEGIN
    WITH event AS (
        INSERT INTO reliability_events (player_id, match_request_id, kind, delta, created_at)
        SELECT e.player_id, e.match_request_id, e.kind, r.delta, p_now
          FROM unnest(p_players, p_matches, p_kinds) AS e(player_id, match_request_id, kind)
          JOIN reliability_rules r ON r.kind = e.kind
        ON CONFLICT (player_id, match_request_id, kind) DO NOTHING
        RETURNING player_id, match_request_id, kind),
    profile AS (
        INSERT INTO players (user_id)
        SELECT DISTINCT player_id FROM event ORDER BY player_id
        ON CONFLICT (user_id) DO UPDATE SET updated_at = p_now)
    SELECT array_agg(player_id), array_agg(match_request_id), array_agg(kind)
      INTO v_players, v_matches, v_kinds
      FROM event;
    IF v_players IS NULL THEN
        RETURN 0;
    END IF;
    WITH event AS (
        SELECT e.player_id, e.match_request_id, e.kind, r.delta, m.ends_at
          FROM unnest(v_players, v_matches, v_kinds) AS e(player_id, match_request_id, kind)
          JOIN reliability_rules r ON r.kind = e.kind
          JOIN match_requests m ON m.id = e.match_request_id),
    total AS (
        SELECT player_id, count(*) FILTER (WHERE kind = 'NO_SHOW') AS no_shows
          FROM event GROUP BY player_id),
    score AS (
        UPDATE players p
           SET reliability_score = (
                   SELECT reliability_fold(p.reliability_score, e.delta
                                           ORDER BY e.ends_at, e.match_request_id, e.kind)
                     FROM event e WHERE e.player_id = p.user_id),
               no_show_count = p.no_show_count + t.no_shows,
               banned_until = CASE
                   WHEN t.no_shows > 0 AND (SELECT count(*) FROM reliability_events r
                                             WHERE r.player_id = p.user_id AND r.kind = 'NO_SHOW'
                                               AND r.created_at > p_now - pol.ban_window)
                                           >= pol.ban_no_shows
                   THEN greatest(p.banned_until, p_now + pol.ban_length)
                   ELSE p.banned_until END,
               updated_at = p_now
          FROM total t, match_policy pol
         WHERE p.user_id = t.player_id
        RETURNING p.user_id, p.reliability_score),
    told AS (
        INSERT INTO notifications (recipient_id, type, payload, created_at)
        SELECT e.player_id, 'NO_SHOW',
               jsonb_build_object('matchRequestId', e.match_request_id,
                                  'reliabilityScore', s.reliability_score), p_now
          FROM event e JOIN score s ON s.user_id = e.player_id
         WHERE e.kind = 'NO_SHOW')
    SELECT count(*) FILTER (WHERE kind = 'NO_SHOW') INTO v_no_shows FROM event;
    RETURN v_no_shows;
END $$;
COMMENT ON FUNCTION reliability_apply(uuid[], uuid[], text[], timestamptz) IS
    'Records and applies reliability events once each (scores, no-shows, bans, NO_SHOW notices).';

-- ---- transitions of many matches at once: expired holds, unfilled, completion ---------------

-- Ends each given hold that is PENDING_PAYMENT past its window (EXPIRE_HOLD): the slot was
-- free already (a lapsed hold is not live); this records it. Returns the ids ended.
CREATE OR REPLACE FUNCTION match_expire_holds(p_ids uuid[], p_now timestamptz DEFAULT now(),
                                              OUT ended uuid[], OUT invitations_expired integer)
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    SELECT * FROM match_end(ARRAY(SELECT id FROM match_requests
                            WHERE id = ANY (p_ids) AND status = 'PENDING_PAYMENT'
                              AND expires_at <= p_now), 'EXPIRE_HOLD', p_now)
      INTO ended, invitations_expired;
END $$;
COMMENT ON FUNCTION match_expire_holds(uuid[], timestamptz) IS
    'Expired payment holds among the ids -> CANCELLED (PAYMENT_EXPIRED), organizer told.';

-- Ends the payment holds of court p_court past their window that overlap p_from to p_to (local
-- instants), locked first, before a new hold or block takes that time (its writer holds the
-- court day's lock, court_day_lock): a lapsed hold never blocks, whether or not the sweeper
-- ran.
CREATE OR REPLACE FUNCTION court_lapsed_holds_end(p_court uuid, p_from timestamp, p_to timestamp,
                                                  p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_lapsed uuid[];
BEGIN
    v_lapsed := ARRAY(
        SELECT m.id FROM match_requests m
         WHERE m.resource_id = p_court AND m.status = 'PENDING_PAYMENT'
           AND m.expires_at <= p_now
           AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time)
               && tsrange(p_from, p_to)
           FOR UPDATE);
    IF cardinality(v_lapsed) > 0 THEN
        PERFORM match_expire_holds(v_lapsed, p_now);
    END IF;
END $$;
COMMENT ON FUNCTION court_lapsed_holds_end(uuid, timestamp, timestamp, timestamptz) IS
    'Ends the lapsed payment holds on a court''s time, before a hold or a block takes it.';

-- Cancels each given match still OPEN at its start (CANCEL_UNFILLED), everyone refunded.
CREATE OR REPLACE FUNCTION match_cancel_unfilled(p_ids uuid[], p_now timestamptz DEFAULT now(),
                                                 OUT ended uuid[], OUT invitations_expired integer)
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    SELECT * FROM match_end(ARRAY(SELECT id FROM match_requests
                            WHERE id = ANY (p_ids) AND status = 'OPEN'
                              AND starts_at <= p_now), 'CANCEL_UNFILLED', p_now)
      INTO ended, invitations_expired;
END $$;
COMMENT ON FUNCTION match_cancel_unfilled(uuid[], timestamptz) IS
    'Matches still OPEN at their start -> CANCELLED (NOT_FILLED), everyone refunded and told.';

-- Completes each given match MATCHED or CONFIRMED past its end (COMPLETE): every player in it
-- is told MATCH_COMPLETED and gets one reliability event, ATTENDED when checked in, NO_SHOW
-- otherwise. Returns (completed, no-shows recorded).
CREATE OR REPLACE FUNCTION match_complete(p_ids uuid[], p_now timestamptz DEFAULT now(),
                                          OUT completed integer, OUT no_shows integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    v_done uuid[];
    v_players uuid[];
    v_matches uuid[];
    v_kinds text[];
BEGIN
    SELECT COALESCE(array_agg(id), '{}') INTO v_done
      FROM match_move(ARRAY(SELECT id FROM match_requests
                             WHERE id = ANY (p_ids) AND status IN ('MATCHED', 'CONFIRMED')
                               AND ends_at <= p_now), 'COMPLETE', p_now) id;
    completed := cardinality(v_done);
    no_shows := 0;
    IF completed = 0 THEN
        RETURN;
    END IF;
    SELECT array_agg(player_id ORDER BY player_id), array_agg(match_request_id ORDER BY player_id),
           array_agg(CASE WHEN checked_in_at IS NOT NULL THEN 'ATTENDED' ELSE 'NO_SHOW' END
                     ORDER BY player_id)
      INTO v_players, v_matches, v_kinds
      FROM match_players WHERE match_request_id = ANY (v_done) AND left_at IS NULL;
    INSERT INTO notifications (recipient_id, type, payload, created_at)
    SELECT player_id, 'MATCH_COMPLETED', jsonb_build_object('matchRequestId', match_request_id), p_now
      FROM unnest(v_players, v_matches) AS a(player_id, match_request_id);
    no_shows := reliability_apply(v_players, v_matches, v_kinds, p_now);
END $$;
COMMENT ON FUNCTION match_complete(uuid[], timestamptz) IS
    'Finished MATCHED/CONFIRMED matches -> COMPLETED with attendance and no-shows recorded.';

-- ---- transitions of one match, for the API: payment, joining, check-in, cancelling, declining ---

-- Locks match p_match for a transition by p_player, who must be in it: the row, or 404.
CREATE OR REPLACE FUNCTION match_lock(p_match uuid, p_player uuid)
    RETURNS match_requests
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
BEGIN
    SELECT * INTO m FROM match_requests WHERE id = p_match FOR UPDATE;
    IF NOT FOUND OR NOT EXISTS (SELECT 1 FROM match_players
                                 WHERE match_request_id = p_match AND player_id = p_player
                                   AND left_at IS NULL) THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    RETURN m;
END $$;
COMMENT ON FUNCTION match_lock(uuid, uuid) IS
    'Locks a match for a transition by one of its players; 404 for anyone else.';

-- The checks of PAY, on match m locked for p_player: NOT_ORGANIZER, PAYMENT_WINDOW_PASSED,
-- INVALID_STATE. Also what asking the provider for the organizer's payment checks first
-- (payment_to_confirm, sql/areas/92_payments.sql).
CREATE OR REPLACE FUNCTION match_pay_check(m match_requests, p_player uuid, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    IF m.organizer_id <> p_player THEN
        PERFORM lifecycle_fail(403, 'NOT_ORGANIZER', 'Only the organizer can pay for the match.');
    END IF;
    IF (m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now)
       OR (m.status = 'CANCELLED' AND m.cancel_reason = 'PAYMENT_EXPIRED') THEN
        PERFORM lifecycle_fail(409, 'PAYMENT_WINDOW_PASSED',
            'The payment window has passed; the slot was released.');
    END IF;
    IF m.status <> 'PENDING_PAYMENT' THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE', 'The match is not awaiting payment.');
    END IF;
END $$;
COMMENT ON FUNCTION match_pay_check(match_requests, uuid, timestamptz) IS
    'The refusals of PAY: NOT_ORGANIZER, PAYMENT_WINDOW_PASSED, INVALID_STATE.';

-- PAY: the organizer confirms payment within the window: OPEN, payment PAID, eligible players
-- invited. 404, 403 NOT_ORGANIZER, 409 PAYMENT_WINDOW_PASSED (the caller then ends the hold
-- with match_expire_holds in a transaction of its own), INVALID_STATE.
CREATE OR REPLACE FUNCTION match_pay(p_match uuid, p_player uuid, p_min_reliability integer,
                                     p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
BEGIN
    PERFORM match_pay_check(m, p_player, p_now);
    PERFORM match_move(ARRAY[p_match], 'PAY', p_now);
    UPDATE payments p SET status = 'PAID', updated_at = p_now
      FROM match_players mp
     WHERE mp.match_request_id = p_match AND mp.player_id = p_player AND mp.left_at IS NULL
       AND p.entry_id = mp.id AND p.kind = 'PAYMENT' AND p.status = 'PENDING';
    PERFORM match_invite(p_match, 'INVITE', p_min_reliability, p_now);
END $$;
COMMENT ON FUNCTION match_pay(uuid, uuid, integer, timestamptz) IS
    'PAY: confirms the organizer''s payment, opens the match and invites eligible players.';

-- JOIN by invitation: 404 NOT_FOUND unless it is the caller's invitation. Returns the match.
CREATE OR REPLACE FUNCTION match_accept_invitation(p_invitation uuid, p_player uuid, p_team text,
                                                   p_now timestamptz DEFAULT now())
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
BEGIN
    -- the match first: every join of it waits here for the one before
    SELECT mr.* INTO m FROM invitations i JOIN match_requests mr ON mr.id = i.match_request_id
     WHERE i.id = p_invitation AND i.player_id = p_player
       FOR UPDATE OF mr;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Invitation not found.');
    END IF;
    PERFORM match_join_locked(m, p_player, p_team, p_invitation, p_now);
    RETURN m.id;
END $$;
COMMENT ON FUNCTION match_accept_invitation(uuid, uuid, text, timestamptz) IS
    'JOIN through an invitation of the caller.';

-- JOIN by the shareable link: 404 NOT_FOUND for an unknown token. Returns the match.
CREATE OR REPLACE FUNCTION match_join_by_token(p_token uuid, p_player uuid, p_team text,
                                               p_now timestamptz DEFAULT now())
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
BEGIN
    SELECT * INTO m FROM match_requests WHERE invitation_token = p_token FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    PERFORM match_join_locked(m, p_player, p_team, NULL, p_now);
    RETURN m.id;
END $$;
COMMENT ON FUNCTION match_join_by_token(uuid, uuid, text, timestamptz) IS
    'JOIN through the shareable invitation token.';

-- The check-in window of match m at p_now, the same for a player's GPS check-in and the
-- desk's: the match is MATCHED or CONFIRMED, and it is from checkin_opens_before the start to
-- the end. 409 INVALID_STATE, CHECKIN_TOO_EARLY, CHECKIN_CLOSED.
CREATE OR REPLACE FUNCTION match_checkin_window(m match_requests, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    IF m.status NOT IN ('MATCHED', 'CONFIRMED') THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE', 'Check-in opens once the match is full.');
    END IF;
    IF p_now < m.starts_at - (SELECT checkin_opens_before FROM match_policy) THEN
        PERFORM lifecycle_fail(409, 'CHECKIN_TOO_EARLY',
            format('Check-in opens %s minutes before the start.',
                   (SELECT extract(epoch FROM checkin_opens_before)::bigint / 60 FROM match_policy)));
    END IF;
    IF p_now > m.ends_at THEN
        PERFORM lifecycle_fail(409, 'CHECKIN_CLOSED', 'The match is over.');
    END IF;
END $$;
COMMENT ON FUNCTION match_checkin_window(match_requests, timestamptz) IS
    'Refuses a check-in outside the match''s window (status, too early, over).';

-- Records p_player of locked match m as there (p_by: who checked them in at the desk, NULL
-- for the player); when everyone is, CONFIRMED and all told.
CREATE OR REPLACE FUNCTION match_checkin_mark(m match_requests, p_player uuid, p_by uuid,
                                              p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_moved integer;
BEGIN
    UPDATE match_players SET checked_in_at = p_now, checked_in_by = p_by
     WHERE match_request_id = m.id AND player_id = p_player AND left_at IS NULL;
    IF EXISTS (SELECT 1 FROM match_players WHERE match_request_id = m.id
                  AND left_at IS NULL AND checked_in_at IS NULL) THEN
        RETURN;
    END IF;
    SELECT count(*) INTO v_moved FROM match_move(ARRAY[m.id], 'CHECKIN', p_now);
    IF v_moved > 0 THEN
        PERFORM notify(match_active_players(m.id), 'MATCH_CONFIRMED',
                       jsonb_build_object('matchRequestId', m.id), p_now);
    END IF;
END $$;
COMMENT ON FUNCTION match_checkin_mark(match_requests, uuid, uuid, timestamptz) IS
    'Marks a player of a locked match checked in; the last one confirms the match.';

-- CHECKIN: a player of a MATCHED or CONFIRMED match, in the window (match_checkin_window),
-- accurate and near enough; when everyone is, CONFIRMED and all told. A repeat is a no-op.
-- 404, 409 INVALID_STATE, CHECKIN_TOO_EARLY, CHECKIN_CLOSED, INACCURATE_POSITION, TOO_FAR.
CREATE OR REPLACE FUNCTION match_checkin(p_match uuid, p_player uuid, p_lat double precision,
                                         p_lng double precision, p_accuracy double precision,
                                         p_radius_m integer, p_max_accuracy_m integer,
                                         p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
    v_far boolean;
BEGIN
    IF m.status IN ('MATCHED', 'CONFIRMED')
       AND EXISTS (SELECT 1 FROM match_players WHERE match_request_id = p_match
                      AND player_id = p_player AND left_at IS NULL
                      AND checked_in_at IS NOT NULL) THEN
        RETURN;
    END IF;
    PERFORM match_checkin_window(m, p_now);
    IF p_accuracy > p_max_accuracy_m THEN
        PERFORM lifecycle_fail(409, 'INACCURATE_POSITION',
            'The position is not accurate enough to check in.');
    END IF;
    SELECT earth_distance(earth_point(v.latitude, v.longitude), earth_point(p_lat, p_lng)) > p_radius_m
      INTO v_far
      FROM resources rs JOIN venues v ON v.id = rs.venue_id WHERE rs.id = m.resource_id;
    IF v_far THEN
        PERFORM lifecycle_fail(409, 'TOO_FAR', 'You are too far from the venue to check in.');
    END IF;
    PERFORM match_checkin_mark(m, p_player, NULL, p_now);
END $$;
COMMENT ON FUNCTION match_checkin(uuid, uuid, double precision, double precision,
                                  double precision, integer, integer, timestamptz) IS
    'CHECKIN: attendance by GPS; the last one confirms the match.';

-- CANCEL by the organizer before the start, from PENDING_PAYMENT, OPEN or MATCHED (see
-- match_end for refunds and notices). Cancelling a cancelled match is a no-op; a hold past its
-- window ends as an expired hold instead. 404, 403 NOT_ORGANIZER, 409 INVALID_STATE,
-- MATCH_STARTED.
CREATE OR REPLACE FUNCTION match_cancel(p_match uuid, p_player uuid, p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
BEGIN
    IF m.organizer_id <> p_player THEN
        PERFORM lifecycle_fail(403, 'NOT_ORGANIZER', 'Only the organizer can cancel the match.');
    END IF;
    IF m.status = 'CANCELLED' THEN
        RETURN;
    END IF;
    IF m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now THEN
        PERFORM match_expire_holds(ARRAY[p_match], p_now);
        RETURN;
    END IF;
    IF m.status NOT IN ('PENDING_PAYMENT', 'OPEN', 'MATCHED') THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE', 'The match can no longer be cancelled.');
    END IF;
    IF p_now >= m.starts_at THEN
        PERFORM lifecycle_fail(409, 'MATCH_STARTED', 'The match has already started.');
    END IF;
    PERFORM match_end(ARRAY[p_match], 'CANCEL', p_now);
END $$;
COMMENT ON FUNCTION match_cancel(uuid, uuid, timestamptz) IS
    'CANCEL: the organizer calls the match off before the start.';

-- Whether p_player already plays at the time of match m: in it, or in another live match
-- overlapping it.
CREATE OR REPLACE FUNCTION match_player_busy(m match_requests, p_player uuid)
    RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    busy boolean;
BEGIN
    SELECT EXISTS (SELECT 1 FROM match_players mp
                     JOIN match_requests o ON o.id = mp.match_request_id
                    WHERE mp.player_id = p_player AND mp.left_at IS NULL
                      AND o.status IN ('PENDING_PAYMENT', 'OPEN', 'MATCHED', 'CONFIRMED')
                      AND (o.id = m.id OR (o.starts_at < m.ends_at AND m.starts_at < o.ends_at)))
      INTO busy;
    RETURN busy;
END $$;
COMMENT ON FUNCTION match_player_busy(match_requests, uuid) IS
    'A player is in a match, or in another live match at the same time.';

-- DECLINE of a pending invitation of the caller: 404 NOT_FOUND unless it is theirs, 409
-- INVALID_STATE unless PENDING. A declined offer, hand-over or granted place passes its place
-- on: to the waiting list, and a hand-over's, with nobody there, to SUBSTITUTE invitations.
CREATE OR REPLACE FUNCTION match_decline_invitation(p_invitation uuid, p_player uuid,
                                                    p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_match uuid;
    v_kind text;
BEGIN
    -- the match first, as every write of its places does
    SELECT mr.id INTO v_match FROM invitations i JOIN match_requests mr ON mr.id = i.match_request_id
     WHERE i.id = p_invitation AND i.player_id = p_player
       FOR UPDATE OF mr;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Invitation not found.');
    END IF;
    PERFORM match_offers_settle(v_match, p_now);
    UPDATE invitations SET status = 'DECLINED', responded_at = p_now
     WHERE id = p_invitation AND status = 'PENDING'
    RETURNING kind INTO v_kind;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE',
            'The invitation was already answered or has expired.');
    END IF;
    PERFORM match_offer_places(v_match, p_now);
    IF v_kind = 'HANDOVER' THEN
        PERFORM match_handover_pass_on(v_match, ARRAY[p_invitation], p_now);
    END IF;
END $$;
COMMENT ON FUNCTION match_decline_invitation(uuid, uuid, timestamptz) IS
    'DECLINE: the caller turns down a pending invitation.';

-- ---- leaving and absence --------------------------------------------------------------------

-- Takes p_player out of locked match m by p_event (LEAVE or ABSENCE): lapsed offers settled
-- first, the join ended (LEFT or ABSENT), a MATCHED match OPEN again, the others told
-- PLAYER_LEFT or PLAYER_ABSENT. A named p_substitute is handed the place first
-- (match_handover_start, sql/areas/65_places.sql); then the places no one holds are offered
-- to the waiting list. Returns the join that ended; 404 NOT_FOUND when the settling freed the
-- player's own place (a share owed past its window: they were no longer in the match).
CREATE OR REPLACE FUNCTION match_withdraw(m match_requests, p_player uuid, p_event text, p_now timestamptz,
                                          p_substitute uuid DEFAULT NULL, p_min_reliability integer DEFAULT 0,
                                          p_late boolean DEFAULT false)
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    v_entry uuid;
    v_team text;
BEGIN
    PERFORM match_offers_settle(m.id, p_now);
    UPDATE match_players SET left_at = p_now, left_reason = CASE p_event WHEN 'LEAVE' THEN 'LEFT' ELSE 'ABSENT' END
     WHERE match_request_id = m.id AND player_id = p_player AND left_at IS NULL AND role = 'PLAYER'
    RETURNING id, team INTO v_entry, v_team;
    IF v_entry IS NULL THEN
        -- the settling just freed the player's place: their share was owed past its window
        -- (match_shares_lapse, sql/areas/92_payments.sql), so they are no longer in the match
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    PERFORM match_move(ARRAY[m.id], p_event, p_now);
    PERFORM notify(match_active_players(m.id), CASE p_event WHEN 'LEAVE' THEN 'PLAYER_LEFT' ELSE 'PLAYER_ABSENT' END,
                   jsonb_build_object('matchRequestId', m.id, 'playerId', p_player), p_now);
    IF p_substitute IS NOT NULL THEN
        PERFORM match_handover_start(m.id, p_player, v_entry, v_team, p_event, p_substitute,
                                     p_min_reliability, p_late, p_now);
    END IF;
    PERFORM match_offer_places(m.id, p_now);
    RETURN v_entry;
END $$;
COMMENT ON FUNCTION match_withdraw(match_requests, uuid, text, timestamptz, uuid, integer, boolean) IS
    'Ends a player''s join by LEAVE or ABSENCE: the place to a substitute, else the waiting list; the others told.';

-- LEAVE: a player (not the organizer) of an OPEN or MATCHED match, more than leave_notice
-- before the start: out, the payment of this join refunded in full; a named p_substitute is
-- offered the place first. 404, 409 ORGANIZER_CANNOT_LEAVE, INVALID_STATE, LEAVE_TOO_LATE
-- (an absence is the way then), and the substitute's refusals (match_handover_start).
CREATE OR REPLACE FUNCTION match_leave(p_match uuid, p_player uuid, p_now timestamptz DEFAULT now(),
                                       p_substitute uuid DEFAULT NULL, p_min_reliability integer DEFAULT 0)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
    v_entry uuid;
BEGIN
    IF m.organizer_id = p_player THEN
        PERFORM lifecycle_fail(409, 'ORGANIZER_CANNOT_LEAVE',
            'The organizer cannot leave; cancel the match instead.');
    END IF;
    IF m.status NOT IN ('OPEN', 'MATCHED') THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE', 'The match can no longer be left.');
    END IF;
    IF m.starts_at - p_now <= (SELECT leave_notice FROM match_policy) THEN
        PERFORM lifecycle_fail(409, 'LEAVE_TOO_LATE',
            format('Leaving is allowed only more than %s hours before the start; report an '
                   'absence instead.',
                   (SELECT extract(epoch FROM leave_notice)::bigint / 3600 FROM match_policy)));
    END IF;
    v_entry := match_withdraw(m, p_player, 'LEAVE', p_now, p_substitute, p_min_reliability);
    PERFORM payments_refund(ARRAY(SELECT id FROM payments WHERE entry_id = v_entry
                                                            AND kind = 'PAYMENT'), p_now);
END $$;
COMMENT ON FUNCTION match_leave(uuid, uuid, timestamptz, uuid, integer) IS
    'LEAVE: a player withdraws well ahead, refunded; a named substitute is offered the place first.';

-- ABSENCE: a player (not the organizer) of an OPEN or MATCHED match, before the start: out
-- without refund; the place is handed to p_substitute when named, else SUBSTITUTE
-- invitations go out. Inside late_absence_window it costs a LATE_ABSENCE at once, unless a
-- hand-over of the place is open: then the penalty waits for the hand-over's window, and a
-- refill refunds the player and waives it (sql/areas/65_places.sql). 404, 409
-- ORGANIZER_CANNOT_LEAVE, INVALID_STATE, MATCH_STARTED, and the substitute's refusals.
CREATE OR REPLACE FUNCTION match_absence(p_match uuid, p_player uuid, p_min_reliability integer,
                                         p_now timestamptz DEFAULT now(), p_substitute uuid DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
    v_late boolean;
    v_entry uuid;
BEGIN
    IF m.organizer_id = p_player THEN
        PERFORM lifecycle_fail(409, 'ORGANIZER_CANNOT_LEAVE',
            'The organizer cannot withdraw; cancel the match instead.');
    END IF;
    IF m.status NOT IN ('OPEN', 'MATCHED') THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE', 'Absence cannot be reported for this match.');
    END IF;
    IF p_now >= m.starts_at THEN
        PERFORM lifecycle_fail(409, 'MATCH_STARTED', 'The match has already started.');
    END IF;
    v_late := m.starts_at - p_now < (SELECT late_absence_window FROM match_policy);
    v_entry := match_withdraw(m, p_player, 'ABSENCE', p_now, p_substitute, p_min_reliability,
                              v_late);
    IF p_substitute IS NULL THEN
        PERFORM match_invite(p_match, 'SUBSTITUTE', p_min_reliability, p_now);
    END IF;
    IF v_late AND NOT EXISTS (SELECT 1 FROM match_handovers
                               WHERE entry_id = v_entry AND status = 'OPEN') THEN
        PERFORM reliability_apply(ARRAY[p_player], ARRAY[p_match], ARRAY['LATE_ABSENCE'], p_now);
    END IF;
END $$;
COMMENT ON FUNCTION match_absence(uuid, uuid, integer, timestamptz, uuid) IS
    'ABSENCE: a late withdrawal without refund but for a refilled hand-over; late ones cost reliability.';

-- ---- inviting, and the join itself ----------------------------------------------------------

-- Invites (p_kind INVITE on payment, SUBSTITUTE after an absence or a hand-over nobody took)
-- the players eligible_players finds around the match's search point
-- (sql/areas/40_players.sql) who are not in it nor invited yet, each told MATCH_INVITATION or
-- SUBSTITUTE_INVITATION. A PRIVATE match invites nobody automatically: that would show it to
-- strangers. Returns how many were invited.
CREATE OR REPLACE FUNCTION match_invite(p_match uuid, p_kind text, p_min_reliability integer,
                                        p_now timestamptz)
    RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    invited integer;
BEGIN
    WITH inv AS (
        INSERT INTO invitations (match_request_id, player_id, kind, sent_at)
        SELECT m.id, e.user_id, p_kind, p_now
          FROM match_requests m
         CROSS JOIN LATERAL eligible_players(m.search_latitude, m.search_longitude,
                                             m.search_radius_km, m.skill_level,
                                             p_min_reliability, p_now) e
         WHERE m.id = p_match AND m.visibility = 'PUBLIC'
           AND NOT EXISTS (SELECT 1 FROM match_players mp
                            WHERE mp.match_request_id = m.id AND mp.player_id = e.user_id)
        ON CONFLICT (match_request_id, player_id) DO NOTHING
        RETURNING id, player_id),
    sent AS (
        INSERT INTO notifications (recipient_id, type, payload, created_at)
        SELECT inv.player_id,
               CASE p_kind WHEN 'SUBSTITUTE' THEN 'SUBSTITUTE_INVITATION' ELSE 'MATCH_INVITATION' END,
               jsonb_build_object('matchRequestId', p_match, 'invitationId', inv.id), p_now
          FROM inv)
    SELECT count(*)::integer FROM inv
      INTO invited;
    RETURN invited;
END $$;
COMMENT ON FUNCTION match_invite(uuid, text, integer, timestamptz) IS
    'Invites (INVITE or SUBSTITUTE) and notifies the eligible players not yet in or invited to a match; returns the count.';

-- JOIN of locked match m by p_player in p_team, through invitation p_invitation (it must
-- still be PENDING) or by the link. Lapsed offers are settled first. A place an offer, a
-- hand-over or a granted place holds is its own player's, who takes it in its team (409
-- OFFER_FOR_OTHER_TEAM otherwise) and accepts the invitation on the way; anyone else needs a
-- place no one holds (TEAM_FULL; the counters' CHECK is the last guard). Then the booking
-- rules; the player leaves the waiting list, the join and its PAID payment of the share are
-- written, an open hand-over of the team is refilled, the others are told PLAYER_JOINED. The
-- join that fills the match makes it MATCHED, expires its pending invitations and tells
-- everyone MATCH_FULL. 409 INVALID_STATE, MATCH_NOT_OPEN, MATCH_STARTED, ALREADY_IN_MATCH.
CREATE OR REPLACE FUNCTION match_join_locked(m match_requests, p_player uuid, p_team text,
                                             p_invitation uuid, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_accepted integer;
    v_entry uuid;
    v_offer invitations;
    v_hold interval;
BEGIN
    PERFORM match_offers_settle(m.id, p_now);
    SELECT * INTO m FROM match_requests WHERE id = m.id;
    IF p_invitation IS NOT NULL
       AND (SELECT status FROM invitations WHERE id = p_invitation) <> 'PENDING' THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE',
            'The invitation was already answered or has expired.');
    END IF;
    IF m.status <> 'OPEN' THEN
        PERFORM lifecycle_fail(409, 'MATCH_NOT_OPEN', 'The match is not open to new players.');
    END IF;
    IF m.starts_at <= p_now THEN
        PERFORM lifecycle_fail(409, 'MATCH_STARTED', 'The match has already started.');
    END IF;
    IF EXISTS (SELECT 1 FROM match_players WHERE match_request_id = m.id
                  AND player_id = p_player AND left_at IS NULL) THEN
        PERFORM lifecycle_fail(409, 'ALREADY_IN_MATCH', 'You already play in this match.');
    END IF;
    -- the player's own open offer, hand-over or granted place, however they came in (the
    -- link takes it too)
    SELECT * INTO v_offer FROM invitations
     WHERE match_request_id = m.id AND player_id = p_player
       AND invitation_holds_place(kind) AND status = 'PENDING';
    IF FOUND AND v_offer.team <> p_team THEN
        PERFORM lifecycle_fail(409, 'OFFER_FOR_OTHER_TEAM',
            format('The place offered to you is in %s.', v_offer.team));
    END IF;
    IF (CASE WHEN p_team = 'TEAM_A' THEN m.team_a_count + m.offers_a
             ELSE m.team_b_count + m.offers_b END)
       - (v_offer.team IS NOT NULL)::int >= m.team_size THEN
        PERFORM lifecycle_fail(409, 'TEAM_FULL', 'The chosen team has no free place.');
    END IF;
    PERFORM booking_rules_check(m.resource_id, p_player, m.starts_at, p_now);
    -- the invitation first: an offer stops holding its place before the player takes it
    WITH a AS (UPDATE invitations SET status = 'ACCEPTED', responded_at = p_now
                WHERE match_request_id = m.id AND player_id = p_player AND status = 'PENDING'
               RETURNING 1)
    SELECT count(*) INTO v_accepted FROM a;
    IF p_invitation IS NOT NULL AND v_accepted = 0 THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE',
            'The invitation was already answered or has expired.');
    END IF;
    UPDATE match_waitlist SET ended_at = p_now, ended_reason = 'JOINED'
     WHERE match_request_id = m.id AND player_id = p_player AND ended_at IS NULL;
    INSERT INTO match_players (match_request_id, player_id, team, role, joined_at)
    VALUES (m.id, p_player, p_team, 'PLAYER', p_now)
    RETURNING id INTO v_entry;
    -- with a payment provider the share is owed, and the place held for it until its window
    -- ends (payment_share_hold, sql/areas/92_payments.sql); without one it is paid at once
    v_hold := CASE WHEN m.price_per_player > 0 THEN payment_share_hold() END;
    INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
                          entry_id, expires_at, created_at, updated_at)
    VALUES (m.id, p_player, 'PAYMENT', m.price_per_player, m.currency,
            CASE WHEN v_hold IS NULL THEN 'PAID' ELSE 'PENDING' END, v_entry, p_now + v_hold,
            p_now, p_now);
    -- a hand-over is refilled by a paid place: a pending one refills it once paid
    IF v_hold IS NULL THEN
        PERFORM match_handover_refill(m.id, p_player, p_team, v_entry, p_now);
    END IF;
    PERFORM notify(match_active_players(m.id, p_player), 'PLAYER_JOINED',
                   jsonb_build_object('matchRequestId', m.id, 'playerId', p_player,
                                      'team', p_team), p_now);
    PERFORM match_fill(m.id, p_now);
END $$;
COMMENT ON FUNCTION match_join_locked(match_requests, uuid, text, uuid, timestamptz) IS
    'JOIN of a locked match: place, payment (owed, with a provider), notices, MATCHED when full and paid.';

-- JOIN's end on locked match p_match: once every place is taken and every share paid, the
-- match is MATCHED, its pending invitations expire and its players are told MATCH_FULL. A
-- place whose share is still owed keeps it OPEN (and full) until that share is paid.
CREATE OR REPLACE FUNCTION match_fill(p_match uuid, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    IF NOT (SELECT status = 'OPEN' AND team_a_count + team_b_count = 2 * team_size
              FROM match_requests WHERE id = p_match)
       OR EXISTS (SELECT 1 FROM match_players mp
                    JOIN payments p ON p.entry_id = mp.id AND p.kind = 'PAYMENT'
                   WHERE mp.match_request_id = p_match AND mp.left_at IS NULL
                     AND p.status = 'PENDING') THEN
        RETURN;
    END IF;
    PERFORM match_move(ARRAY[p_match], 'JOIN', p_now);
    PERFORM invitations_expire(match_pending_invitations(ARRAY[p_match]));
    PERFORM notify(match_active_players(p_match), 'MATCH_FULL',
                   jsonb_build_object('matchRequestId', p_match), p_now);
END $$;
COMMENT ON FUNCTION match_fill(uuid, timestamptz) IS
    'A locked OPEN match with every place taken and paid -> MATCHED, invitations expired, players told.';

-- The team counters' triggers: every place but the organizer's is counted as it is inserted
-- (match_hold counts the organizer in the match's own insert, so the new row is not written
-- a second time); every leave is counted.
CREATE OR REPLACE TRIGGER match_players_count AFTER INSERT ON match_players
    FOR EACH ROW WHEN (NEW.role <> 'ORGANIZER') EXECUTE FUNCTION match_players_count();

CREATE OR REPLACE TRIGGER match_players_count_left AFTER UPDATE OF left_at ON match_players
    FOR EACH ROW EXECUTE FUNCTION match_players_count();

-- ---- holds, and the end of a match ----------------------------------------------------------

-- POST /api/match/requests in one statement: the terms of the new match (match_new_terms),
-- its hold, and the request's JSON as the rest of the transaction sees it. Refusals as
-- match_hold's. The program keeps BEGIN and COMMIT around it: a statement whose kept
-- connection a restarted server closed is sent again only outside a transaction, and a write
-- must never be sent twice.
CREATE OR REPLACE FUNCTION match_create(p_visibility text, p_competitive boolean, p_resource uuid,
                                        p_organizer uuid, p_date date, p_start time, p_duration integer,
                                        p_format text, p_skill text, p_message text,
                                        p_lat double precision, p_lng double precision, p_radius numeric,
                                        p_hold_seconds integer, p_max_holds integer)
    RETURNS json
    LANGUAGE plpgsql
AS $$
DECLARE
    v_id uuid;
BEGIN
    PERFORM match_new_terms(p_visibility, p_competitive);
    v_id := match_hold(p_resource, p_organizer, p_date, p_start, p_duration, p_format, p_skill,
                       p_message, p_lat, p_lng, p_radius, p_hold_seconds,
                       p_max_holds => p_max_holds);
    RETURN (SELECT json_match_request(m, true, p_organizer) FROM match_requests m WHERE m.id = v_id);
END $$;
COMMENT ON FUNCTION match_create(text, boolean, uuid, uuid, date, time, integer, text, text, text,
                                 double precision, double precision, numeric, integer, integer) IS
    'A new match on a free slot with its terms, held for payment; returns its JSON.';

-- Ends matches p_ids by p_event (EXPIRE_HOLD, CANCEL or CANCEL_UNFILLED): each moves to
-- CANCELLED with the reason of its transition; the current join of every player still in it
-- is refunded (the organizer's not when the organizer cancels less than
-- organizer_refund_notice ahead), pending payments are cancelled (and their intents at the
-- provider, by the sweeper: sql/areas/92_payments.sql), pending invitations
-- expire, and the players are told: PAYMENT_EXPIRED {matchRequestId} to the organizer of an
-- expired hold, MATCH_CANCELLED {matchRequestId, reason} after CANCEL_UNFILLED, and
-- {matchRequestId, reason, refund} after CANCEL, with the venue's note after CLUB_CANCEL
-- (sql/areas/67_desk.sql), which refunds every paid share in full. Returns the ids ended and
-- how many invitations expired.
--
-- The sweeper hands it the holds its claim has locked and tested (sweep_expired_holds), not
-- through match_expire_holds, which would test them again. Only PAID payments go to
-- payments_refund (a hold's payment is PENDING, and is cancelled), and the notices read the
-- match only for the reason, which an expired hold's notice does not carry.
CREATE OR REPLACE FUNCTION match_end(p_ids uuid[], p_event text, p_now timestamptz,
                                     OUT ended uuid[], OUT invitations_expired integer)
    LANGUAGE plpgsql
AS $$
DECLARE
    v_ended uuid[];
    v_players uuid[];
    v_matches uuid[];
    v_amounts numeric[];
BEGIN
    SELECT COALESCE(array_agg(id), '{}') INTO v_ended FROM match_move(p_ids, p_event, p_now) id;
    ended := v_ended;
    invitations_expired := 0;
    IF cardinality(v_ended) = 0 THEN
        RETURN;
    END IF;
    SELECT COALESCE(array_agg(f.player_id), '{}'), COALESCE(array_agg(f.match_request_id), '{}'),
           COALESCE(array_agg(f.amount), '{}')
      INTO v_players, v_matches, v_amounts
      FROM payments_refund(ARRAY(
        SELECT p.id
          FROM match_players mp
          JOIN payments p ON p.entry_id = mp.id AND p.kind = 'PAYMENT' AND p.status = 'PAID'
          JOIN match_requests m ON m.id = mp.match_request_id
         CROSS JOIN match_policy pol
         WHERE mp.match_request_id = ANY (v_ended) AND mp.left_at IS NULL
           AND NOT (p_event = 'CANCEL' AND mp.role = 'ORGANIZER'
                    AND m.starts_at - p_now < pol.organizer_refund_notice)), p_now) f;
    -- a pending payment's PaymentIntent is cancelled at the provider by the sweeper
    UPDATE payments SET status = 'CANCELLED', updated_at = p_now,
                        next_attempt_at = CASE WHEN provider_ref IS NOT NULL THEN p_now END
     WHERE match_request_id = ANY (v_ended) AND kind = 'PAYMENT' AND status = 'PENDING';
    invitations_expired := invitations_expire(match_pending_invitations(v_ended));
    INSERT INTO notifications (recipient_id, type, payload, created_at)
    SELECT mp.player_id,
           CASE p_event WHEN 'EXPIRE_HOLD' THEN 'PAYMENT_EXPIRED' ELSE 'MATCH_CANCELLED' END,
           CASE p_event
               WHEN 'EXPIRE_HOLD' THEN jsonb_build_object('matchRequestId', mp.match_request_id)
               WHEN 'CANCEL_UNFILLED' THEN jsonb_build_object('matchRequestId', mp.match_request_id,
                                                              'reason', m.cancel_reason)
               ELSE jsonb_build_object('matchRequestId', mp.match_request_id,
                                       'reason', m.cancel_reason,
                                       'refund', (SELECT sum(u.amount)::text
                                                    FROM unnest(v_players, v_matches, v_amounts)
                                                         AS u(player_id, match_request_id, amount)
                                                   WHERE u.match_request_id = mp.match_request_id
                                                     AND u.player_id = mp.player_id))
                    -- the venue's words when it called the match off (CLUB_CANCEL)
                    || CASE WHEN m.cancel_note IS NOT NULL
                            THEN jsonb_build_object('note', m.cancel_note) ELSE '{}' END
           END,
           p_now
      FROM match_players mp
      -- the reason, for the notices that carry it (the match is there: the players' key)
      LEFT JOIN match_requests m ON m.id = mp.match_request_id AND p_event <> 'EXPIRE_HOLD'
     WHERE mp.match_request_id = ANY (v_ended) AND mp.left_at IS NULL;
END $$;
COMMENT ON FUNCTION match_end(uuid[], text, timestamptz) IS
    'Cancels matches by EXPIRE_HOLD, CANCEL or CANCEL_UNFILLED with their refunds, expiries and notices.';

-- HOLD: opens a match on a free slot of court p_resource, held for p_hold_seconds until the
-- organizer pays. 404 NOT_FOUND (court unknown, or it or its venue not ACTIVE), 409
-- SLOT_NOT_OFFERED, SLOT_IN_PAST, NOT_BOOKABLE, the fair-use refusals (HOLD_LIMIT past
-- p_max_holds live unpaid holds, the venue's booking rules: sql/areas/55_fair_use.sql), and
-- SLOT_TAKEN from the exclusion constraint match_requests_no_double_booking, which stays the
-- guard. A lapsed hold on the slot is ended first, so it never blocks, whether or not the
-- sweeper ran. Returns the new match's id.
--
-- The holds of one court and day queue for each other on a transaction lock, taken once the
-- request has passed its refusals and before it reads the lapsed holds and inserts. The
-- constraint is checked after the row is in the index, waiting for a conflicting row still in
-- flight: two holds of one slot that insert before either checks would wait for each other
-- until the deadlock detector ended one (409 CONCURRENT_UPDATE instead of SLOT_TAKEN), and a
-- hold rolled back wakes every hold waiting for it into that trap at once. In the queue the
-- next hold finds the one before committed (SLOT_TAKEN) or gone. The lock adds no wait: an
-- insert on a court and day waits for every other one in flight at the day's version row
-- anyway (availability_day_bump, sql/areas/20_versions.sql, from the trigger after the
-- insert). A series takes its days in date order, so the queues form no cycle; a slot ends on
-- its own date, so the day is the whole key.
--
-- The match, its first status change, the organizer's place and payment are written by one
-- statement, each insert taking what it needs from the one before through RETURNING (the
-- foreign keys are checked at its end); the organizer is counted in the match's insert
-- (team_a_count 1). Visibility and competitiveness come from the columns' defaults, which
-- read what match_new_terms set (match_create).
CREATE OR REPLACE FUNCTION match_hold(p_resource uuid, p_organizer uuid, p_date date, p_start time,
                                      p_duration integer, p_format text, p_skill text,
                                      p_message text, p_lat double precision,
                                      p_lng double precision, p_radius numeric,
                                      p_hold_seconds integer, p_now timestamptz DEFAULT now(),
                                      p_max_holds integer DEFAULT NULL)
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    v_dur_ok boolean;
    v_end time;
    v_past boolean;
    v_price numeric;
    v_currency char(3);
    v_tz text;
    v_size integer;
    v_id uuid;
BEGIN
    SELECT rs.slot_duration_minutes = p_duration, s.end_time,
           (p_date + p_start) AT TIME ZONE v.timezone <= p_now, s.price, s.currency, v.timezone,
           f.team_size
      INTO v_dur_ok, v_end, v_past, v_price, v_currency, v_tz, v_size
      FROM resources rs
      JOIN venues v ON v.id = rs.venue_id
      LEFT JOIN match_formats f ON f.format = p_format
      LEFT JOIN LATERAL (SELECT x.end_time, x.price, x.currency
                           FROM resource_slots(rs.id, p_date, p_now) x
                          WHERE x.start_time = p_start) s ON true
     WHERE rs.id = p_resource AND rs.status = 'ACTIVE' AND v.status = 'ACTIVE';
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Resource not found.');
    END IF;
    IF NOT v_dur_ok OR v_end IS NULL THEN
        PERFORM lifecycle_fail(409, 'SLOT_NOT_OFFERED',
            'The court offers no slot of that length starting at that time.');
    END IF;
    IF v_past THEN
        PERFORM lifecycle_fail(409, 'SLOT_IN_PAST', 'The slot has already started.');
    END IF;
    IF v_price IS NULL THEN
        PERFORM lifecycle_fail(409, 'NOT_BOOKABLE', 'The slot has no price and cannot be booked.');
    END IF;
    -- fair use: the player's unpaid holds and the club's booking rules
    PERFORM hold_limit_check(p_organizer, p_max_holds, p_now);
    PERFORM booking_rules_check(p_resource, p_organizer, (p_date + p_start) AT TIME ZONE v_tz,
                                p_now);
    -- one hold of this court and day at a time (see above)
    PERFORM court_day_lock(p_resource, p_date);
    PERFORM court_lapsed_holds_end(p_resource, p_date + p_start, p_date + v_end, p_now);
    -- team_a_count 1: the organizer's place, inserted with it (match_players_count skips
    -- it); the organizer's share takes the cents that do not divide evenly
    WITH m AS (
        INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time,
                                    end_time, starts_at, ends_at, format, skill_level, status,
                                    team_size, team_a_count, court_price, price_per_player,
                                    currency, custom_message, search_latitude,
                                    search_longitude, search_radius_km, expires_at, created_at,
                                    updated_at)
        SELECT p_resource, p_organizer, p_date, p_start, v_end,
               (p_date + p_start) AT TIME ZONE v_tz, (p_date + v_end) AT TIME ZONE v_tz,
               p_format, p_skill, t.to_status, v_size, 1, v_price,
               floor(v_price * 100 / (2 * v_size)) / 100, v_currency, p_message,
               p_lat, p_lng, p_radius, p_now + make_interval(secs => p_hold_seconds), p_now,
               p_now
          FROM match_transitions t WHERE t.from_status = 'NONE' AND t.event = 'HOLD'
        RETURNING id, organizer_id, status, team_size, court_price, price_per_player, currency),
    changed AS (
        INSERT INTO match_status_changes (match_request_id, event, from_status, to_status,
                                          changed_at)
        SELECT id, 'HOLD', 'NONE', status, p_now FROM m),
    place AS (
        INSERT INTO match_players (match_request_id, player_id, team, role, joined_at)
        SELECT id, organizer_id, 'TEAM_A', 'ORGANIZER', p_now FROM m
        RETURNING id, match_request_id)
    INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
                          entry_id, created_at, updated_at)
    SELECT m.id, m.organizer_id, 'PAYMENT',
           m.court_price - m.price_per_player * (2 * m.team_size - 1), m.currency, 'PENDING',
           place.id, p_now, p_now
      FROM m JOIN place ON place.match_request_id = m.id
    RETURNING match_request_id INTO v_id;
    RETURN v_id;
END $$;
COMMENT ON FUNCTION match_hold(uuid, uuid, date, time, integer, text, text, text, double precision,
                               double precision, numeric, integer, timestamptz, integer) IS
    'HOLD: a new match on a free slot, awaiting the organizer''s payment.';
