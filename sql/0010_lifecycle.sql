-- 0010_lifecycle: the life of a match and of a player in it, written once.
--
-- Every change of the match tables (match_requests, match_players, invitations, payments,
-- reliability, the notifications they cause) goes through one function per transition below;
-- the request handlers and the sweeper call these functions and write nothing themselves.
-- Each function locks what it changes, checks its preconditions, writes the state, the ledger
-- rows and the notifications, and fails with a stable problem code:
--
--     RAISE ... ERRCODE 'CRnnn' (nnn the HTTP status), MESSAGE the code, DETAIL the text
--
-- which common/sql.c turns into the answer. A failed function has written nothing (the
-- transaction rolls back).
--
-- Time: every function takes p_now, defaulting to now(); the service never passes it, so in
-- production "now" is always the database's transaction time. The randomized lifecycle test
-- passes its own clock to move time.
--
-- The rules' numbers stand once each, in match_formats, match_policy and reliability_rules;
-- the allowed status changes in match_transitions, which every status change consults and
-- records in match_status_changes.
--
-- The ledger: a payment is a row per join (payments.entry_id names the match_players row it
-- pays for), a refund names the payment it gives back (payments.refund_of, at most one refund
-- per payment). So a player may leave and rejoin any number of times, and for every join:
-- paid minus refunded is the player's share while they are in the match (or absent, or the
-- match was played), and zero after leaving with a refund, an expired hold or a cancellation,
-- except the organizer's share of a cancellation less than a day ahead, which is kept.

-- ---- the numbers ------------------------------------------------------------------------

CREATE TABLE match_formats (
    format    text PRIMARY KEY,
    team_size integer NOT NULL CHECK (team_size BETWEEN 1 AND 2)
);
COMMENT ON TABLE match_formats IS 'Match formats and how many players a team has.';
COMMENT ON COLUMN match_formats.format IS 'TWO_VS_TWO, ONE_VS_ONE or AMERICANO.';
COMMENT ON COLUMN match_formats.team_size IS 'Players per team; a match has two teams.';
INSERT INTO match_formats VALUES ('ONE_VS_ONE', 1), ('TWO_VS_TWO', 2), ('AMERICANO', 2);
ALTER TABLE match_requests ADD CONSTRAINT match_requests_format_known
    FOREIGN KEY (format) REFERENCES match_formats (format);

CREATE TABLE match_policy (
    only_row                boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    leave_notice            interval NOT NULL,
    late_absence_window     interval NOT NULL,
    organizer_refund_notice interval NOT NULL,
    checkin_opens_before    interval NOT NULL,
    ban_no_shows            integer NOT NULL CHECK (ban_no_shows > 0),
    ban_window              interval NOT NULL,
    ban_length              interval NOT NULL
);
COMMENT ON TABLE match_policy IS 'The time limits and the ban rule of the match lifecycle (one row).';
COMMENT ON COLUMN match_policy.only_row IS 'Always true: the table has one row.';
COMMENT ON COLUMN match_policy.leave_notice IS 'Leaving (refunded) is allowed only more than this before the start.';
COMMENT ON COLUMN match_policy.late_absence_window IS 'An absence reported less than this before the start costs reliability.';
COMMENT ON COLUMN match_policy.organizer_refund_notice IS 'The organizer cancelling at least this far ahead is refunded.';
COMMENT ON COLUMN match_policy.checkin_opens_before IS 'Check-in opens this long before the start.';
COMMENT ON COLUMN match_policy.ban_no_shows IS 'No-shows within ban_window that ban automatic invitations.';
COMMENT ON COLUMN match_policy.ban_window IS 'How far back no-shows count towards a ban.';
COMMENT ON COLUMN match_policy.ban_length IS 'How long a ban lasts.';
INSERT INTO match_policy (leave_notice, late_absence_window, organizer_refund_notice,
                          checkin_opens_before, ban_no_shows, ban_window, ban_length)
VALUES ('48 hours', '24 hours', '24 hours', '30 minutes', 3, '90 days', '30 days');

CREATE TABLE reliability_rules (
    kind  text PRIMARY KEY,
    delta integer NOT NULL
);
COMMENT ON TABLE reliability_rules IS 'What each reliability event does to the 0..100 score.';
COMMENT ON COLUMN reliability_rules.kind IS 'NO_SHOW, LATE_ABSENCE or ATTENDED.';
COMMENT ON COLUMN reliability_rules.delta IS 'Change of the score, clamped to 0..100 when applied.';
INSERT INTO reliability_rules VALUES ('NO_SHOW', -25), ('LATE_ABSENCE', -10), ('ATTENDED', 5);
ALTER TABLE reliability_events ADD CONSTRAINT reliability_events_kind_known
    FOREIGN KEY (kind) REFERENCES reliability_rules (kind);
COMMENT ON COLUMN reliability_events.kind IS 'A kind of reliability_rules.';

-- ---- the transitions ------------------------------------------------------------------

CREATE TABLE match_transitions (
    from_status   text NOT NULL,
    event         text NOT NULL,
    to_status     text NOT NULL,
    cancel_reason text,
    PRIMARY KEY (from_status, event),
    CHECK ((to_status = 'CANCELLED') = (cancel_reason IS NOT NULL))
);
COMMENT ON TABLE match_transitions IS 'Every allowed change of a match status: from, event, to.';
COMMENT ON COLUMN match_transitions.from_status IS 'Status before; NONE for a new match.';
COMMENT ON COLUMN match_transitions.event IS 'What happened: HOLD, PAY, EXPIRE_HOLD, JOIN, LEAVE, ABSENCE, CHECKIN, CANCEL, CANCEL_UNFILLED, COMPLETE.';
COMMENT ON COLUMN match_transitions.to_status IS 'Status after.';
COMMENT ON COLUMN match_transitions.cancel_reason IS 'match_requests.cancel_reason set by a move to CANCELLED.';
INSERT INTO match_transitions VALUES
    ('NONE',            'HOLD',            'PENDING_PAYMENT', NULL),
    ('PENDING_PAYMENT', 'PAY',             'OPEN',            NULL),
    ('PENDING_PAYMENT', 'EXPIRE_HOLD',     'CANCELLED',       'PAYMENT_EXPIRED'),
    ('PENDING_PAYMENT', 'CANCEL',          'CANCELLED',       'ORGANIZER'),
    ('OPEN',            'JOIN',            'MATCHED',         NULL),
    ('OPEN',            'CANCEL',          'CANCELLED',       'ORGANIZER'),
    ('OPEN',            'CANCEL_UNFILLED', 'CANCELLED',       'NOT_FILLED'),
    ('MATCHED',         'LEAVE',           'OPEN',            NULL),
    ('MATCHED',         'ABSENCE',         'OPEN',            NULL),
    ('MATCHED',         'CHECKIN',         'CONFIRMED',       NULL),
    ('MATCHED',         'CANCEL',          'CANCELLED',       'ORGANIZER'),
    ('MATCHED',         'COMPLETE',        'COMPLETED',       NULL),
    ('CONFIRMED',       'COMPLETE',        'COMPLETED',       NULL);

CREATE TABLE match_status_changes (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    match_request_id uuid NOT NULL REFERENCES match_requests (id),
    event            text NOT NULL,
    from_status      text NOT NULL,
    to_status        text NOT NULL,
    changed_at       timestamptz NOT NULL,
    FOREIGN KEY (from_status, event) REFERENCES match_transitions (from_status, event)
);
COMMENT ON TABLE match_status_changes IS 'History of every match status change, in order.';
COMMENT ON COLUMN match_status_changes.match_request_id IS 'The match.';
COMMENT ON COLUMN match_status_changes.event IS 'The event of match_transitions that moved it.';
COMMENT ON COLUMN match_status_changes.from_status IS 'Status before.';
COMMENT ON COLUMN match_status_changes.to_status IS 'Status after.';
COMMENT ON COLUMN match_status_changes.changed_at IS 'When.';
CREATE INDEX match_status_changes_match_idx ON match_status_changes (match_request_id, id);

-- ---- the ledger: a payment per join, a refund per payment -------------------------------

ALTER TABLE match_players ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE match_players ADD CONSTRAINT match_players_pkey PRIMARY KEY (id);
COMMENT ON COLUMN match_players.id IS 'This join of the player to the match (a rejoin is a new row).';

ALTER TABLE payments ADD COLUMN entry_id uuid REFERENCES match_players (id);
ALTER TABLE payments ADD COLUMN refund_of uuid REFERENCES payments (id);
COMMENT ON COLUMN payments.entry_id IS 'PAYMENT: the join (match_players.id) it pays for.';
COMMENT ON COLUMN payments.refund_of IS 'REFUND: the payment it gives back.';
-- rows written before this migration: a payment pays for the player's latest join made before
-- it, a refund gives back the player's latest payment
UPDATE payments p
   SET entry_id = (SELECT mp.id FROM match_players mp
                    WHERE mp.match_request_id = p.match_request_id AND mp.player_id = p.player_id
                    ORDER BY mp.joined_at <= p.created_at DESC, mp.joined_at DESC LIMIT 1)
 WHERE p.kind = 'PAYMENT';
UPDATE payments p
   SET refund_of = (SELECT x.id FROM payments x
                     WHERE x.match_request_id = p.match_request_id AND x.player_id = p.player_id
                       AND x.kind = 'PAYMENT' AND x.status = 'PAID'
                     ORDER BY x.created_at DESC LIMIT 1)
 WHERE p.kind = 'REFUND';
ALTER TABLE payments ADD CONSTRAINT payments_payment_names_join
    CHECK ((kind = 'PAYMENT') = (entry_id IS NOT NULL));
ALTER TABLE payments ADD CONSTRAINT payments_refund_names_payment
    CHECK ((kind = 'REFUND') = (refund_of IS NOT NULL));
DROP INDEX payments_one_refund_idx;
CREATE UNIQUE INDEX payments_one_refund_per_payment ON payments (refund_of) WHERE kind = 'REFUND';
CREATE INDEX payments_entry_idx ON payments (entry_id) WHERE kind = 'PAYMENT';

-- ---- building blocks ----------------------------------------------------------------------

-- Fails the transition: the caller's transaction rolls back and the client is answered
-- p_status with code p_code (common/sql.c).
CREATE FUNCTION lifecycle_fail(p_status integer, p_code text, p_detail text) RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'CR' || p_status::text, MESSAGE = p_code, DETAIL = p_detail;
END $$;
COMMENT ON FUNCTION lifecycle_fail(integer, text, text) IS
    'Raises SQLSTATE CR<status> with the problem code as message and the detail.';

-- Moves each of p_ids whose status has a transition for p_event to that transition's status
-- (and cancel reason), and records it. Returns the ids moved; the others are left alone.
CREATE FUNCTION match_move(p_ids uuid[], p_event text, p_now timestamptz)
    RETURNS SETOF uuid
    LANGUAGE sql
AS $$
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
$$;
COMMENT ON FUNCTION match_move(uuid[], text, timestamptz) IS
    'Applies event to the matches it is a transition of (match_transitions), recording each change.';

-- The one way to notify: one row per recipient of one event.
CREATE FUNCTION notify(p_recipients uuid[], p_type text, p_payload jsonb, p_now timestamptz)
    RETURNS void
    LANGUAGE sql
AS $$
    INSERT INTO notifications (recipient_id, type, payload, created_at)
    SELECT DISTINCT r, p_type, p_payload, p_now FROM unnest(p_recipients) r;
$$;
COMMENT ON FUNCTION notify(uuid[], text, jsonb, timestamptz) IS 'Writes one notification per recipient.';

-- Players now in the match, optionally without one.
CREATE FUNCTION match_active_players(p_match uuid, p_except uuid DEFAULT NULL)
    RETURNS uuid[]
    LANGUAGE sql STABLE
AS $$
    SELECT COALESCE(array_agg(player_id ORDER BY player_id), '{}')
      FROM match_players
     WHERE match_request_id = p_match AND left_at IS NULL
       AND player_id IS DISTINCT FROM p_except;
$$;
COMMENT ON FUNCTION match_active_players(uuid, uuid) IS 'Ids of the players in a match, optionally but one.';

-- Refunds each given payment that is PAID and not refunded yet, in full, once (the unique
-- index on refund_of is the last guard). Returns what was refunded.
CREATE FUNCTION payments_refund(p_payments uuid[], p_now timestamptz)
    RETURNS TABLE (payment_id uuid, player_id uuid, match_request_id uuid, amount numeric)
    LANGUAGE sql
AS $$
    INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
                          refund_of, created_at, updated_at)
    SELECT p.match_request_id, p.player_id, 'REFUND', p.amount, p.currency, 'REFUNDED',
           p.id, p_now, p_now
      FROM payments p
     WHERE p.id = ANY (p_payments) AND p.kind = 'PAYMENT' AND p.status = 'PAID' AND p.amount > 0
       AND NOT EXISTS (SELECT 1 FROM payments r WHERE r.refund_of = p.id)
    ON CONFLICT (refund_of) WHERE kind = 'REFUND' DO NOTHING
    RETURNING refund_of, player_id, match_request_id, amount;
$$;
COMMENT ON FUNCTION payments_refund(uuid[], timestamptz) IS
    'Refunds each PAID payment given, in full and at most once; returns the refunds.';

-- Ends each given invitation that is still PENDING as EXPIRED; returns how many.
CREATE FUNCTION invitations_expire(p_ids uuid[])
    RETURNS integer
    LANGUAGE sql
AS $$
    WITH e AS (UPDATE invitations SET status = 'EXPIRED'
                WHERE id = ANY (p_ids) AND status = 'PENDING' RETURNING 1)
    SELECT count(*)::integer FROM e;
$$;
COMMENT ON FUNCTION invitations_expire(uuid[]) IS 'PENDING invitations among the ids -> EXPIRED; returns the count.';

-- Pending invitations of the given matches.
CREATE FUNCTION match_pending_invitations(p_matches uuid[])
    RETURNS uuid[]
    LANGUAGE sql STABLE
AS $$
    SELECT COALESCE(array_agg(id), '{}') FROM invitations
     WHERE match_request_id = ANY (p_matches) AND status = 'PENDING';
$$;
COMMENT ON FUNCTION match_pending_invitations(uuid[]) IS 'Ids of the PENDING invitations of some matches.';

-- A score moved by one more event, from p_start when there is no score yet: plus the
-- event's delta, clamped to 0..100.
CREATE FUNCTION reliability_step(p_score integer, p_start integer, p_delta integer)
    RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN least(100, greatest(0, COALESCE(p_score, p_start) + p_delta));
COMMENT ON FUNCTION reliability_step(integer, integer, integer) IS
    'A reliability score moved by one more event delta (from the start given), clamped to 0..100.';

-- A score moved from a start by events one after another, in the order given.
CREATE AGGREGATE reliability_fold(integer, integer) (SFUNC = reliability_step, STYPE = integer);
COMMENT ON AGGREGATE reliability_fold(integer, integer) IS
    'reliability_fold(start, delta ORDER BY ...): the score after the deltas one by one, each clamped.';

-- Records reliability events (each (player, match, kind) once) and applies them: each
-- player's score moves by each new event in turn, clamped to 0..100 each time, in the order
-- the matches ended (then by match and kind). A batch's sum clamped once made a score depend
-- on how the sweeper batched matches (from 100, +5 and -25 gave 80 in one batch, 75 in two).
-- No-shows counted, a ban when the no-shows within the policy window reach the limit, each
-- no-show notified with the new score. Players without a profile get one. Player rows are
-- locked in id order, so concurrent callers wait for each other instead of deadlocking; the
-- second statement runs on a snapshot taken after those locks, so a concurrent no-show is
-- never missed. Returns the no-shows recorded.
CREATE FUNCTION reliability_apply(p_players uuid[], p_matches uuid[], p_kinds text[],
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

-- Invites to a match every eligible player (0005_eligibility.sql) who never played in it and
-- was not invited yet, and tells each one: INVITE (after payment) notifies MATCH_INVITATION,
-- SUBSTITUTE (after an absence) SUBSTITUTE_INVITATION, with {matchRequestId, invitationId}.
-- superseded: 0006 created these on databases set up before this file
SET LOCAL client_min_messages = warning;
DROP FUNCTION IF EXISTS match_invite(uuid, text, integer);
DROP FUNCTION IF EXISTS match_hold_expire(uuid);
DROP FUNCTION IF EXISTS reliability_record(uuid, uuid, text, integer);
RESET client_min_messages;
CREATE FUNCTION match_invite(p_match uuid, p_kind text, p_min_reliability integer,
                             p_now timestamptz)
    RETURNS integer
    LANGUAGE sql
AS $$
    WITH inv AS (
        INSERT INTO invitations (match_request_id, player_id, kind, sent_at)
        SELECT m.id, e.user_id, p_kind, p_now
          FROM match_requests m
         CROSS JOIN LATERAL eligible_players(m.search_latitude, m.search_longitude,
                                             m.search_radius_km, m.skill_level,
                                             p_min_reliability, p_now) e
         WHERE m.id = p_match
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
    SELECT count(*)::integer FROM inv;
$$;
COMMENT ON FUNCTION match_invite(uuid, text, integer, timestamptz) IS
    'Invites (INVITE or SUBSTITUTE) and notifies the eligible players not yet in or invited to a match; returns the count.';

-- Ends matches by p_event (EXPIRE_HOLD, CANCEL or CANCEL_UNFILLED): each moves to CANCELLED
-- with the reason of its transition; the current join of every player still in it is refunded
-- (the organizer's not when the organizer cancels less than organizer_refund_notice ahead),
-- pending payments are cancelled, pending invitations expire, and the players are told:
-- PAYMENT_EXPIRED {matchRequestId} to the organizer of an expired hold, MATCH_CANCELLED
-- {matchRequestId, reason} after CANCEL_UNFILLED, and {matchRequestId, reason, refund} after
-- CANCEL. Returns the ids ended and how many invitations expired.
CREATE FUNCTION match_end(p_ids uuid[], p_event text, p_now timestamptz,
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
          JOIN match_requests m ON m.id = mp.match_request_id
          JOIN payments p ON p.entry_id = mp.id AND p.kind = 'PAYMENT'
         CROSS JOIN match_policy pol
         WHERE mp.match_request_id = ANY (v_ended) AND mp.left_at IS NULL
           AND NOT (p_event = 'CANCEL' AND mp.role = 'ORGANIZER'
                    AND m.starts_at - p_now < pol.organizer_refund_notice)), p_now) f;
    UPDATE payments SET status = 'CANCELLED', updated_at = p_now
     WHERE match_request_id = ANY (v_ended) AND kind = 'PAYMENT' AND status = 'PENDING';
    invitations_expired := invitations_expire(match_pending_invitations(v_ended));
    INSERT INTO notifications (recipient_id, type, payload, created_at)
    SELECT mp.player_id,
           CASE p_event WHEN 'EXPIRE_HOLD' THEN 'PAYMENT_EXPIRED' ELSE 'MATCH_CANCELLED' END,
           CASE p_event
               WHEN 'EXPIRE_HOLD' THEN jsonb_build_object('matchRequestId', m.id)
               WHEN 'CANCEL_UNFILLED' THEN jsonb_build_object('matchRequestId', m.id,
                                                              'reason', m.cancel_reason)
               ELSE jsonb_build_object('matchRequestId', m.id, 'reason', m.cancel_reason,
                                       'refund', (SELECT sum(u.amount)::text
                                                    FROM unnest(v_players, v_matches, v_amounts)
                                                         AS u(player_id, match_request_id, amount)
                                                   WHERE u.match_request_id = m.id
                                                     AND u.player_id = mp.player_id))
           END,
           p_now
      FROM match_requests m
      JOIN match_players mp ON mp.match_request_id = m.id AND mp.left_at IS NULL
     WHERE m.id = ANY (v_ended);
END $$;
COMMENT ON FUNCTION match_end(uuid[], text, timestamptz) IS
    'Cancels matches by EXPIRE_HOLD, CANCEL or CANCEL_UNFILLED with their refunds, expiries and notices.';

-- ---- transitions of the sweeper (sets of matches) ----------------------------------------

-- Ends each given hold that is PENDING_PAYMENT past its window (EXPIRE_HOLD): the slot was
-- free already (a lapsed hold is not live); this records it. Returns the ids ended.
CREATE FUNCTION match_expire_holds(p_ids uuid[], p_now timestamptz DEFAULT now(),
                                   OUT ended uuid[], OUT invitations_expired integer)
    LANGUAGE sql
AS $$
    SELECT * FROM match_end(ARRAY(SELECT id FROM match_requests
                            WHERE id = ANY (p_ids) AND status = 'PENDING_PAYMENT'
                              AND expires_at <= p_now), 'EXPIRE_HOLD', p_now);
$$;
COMMENT ON FUNCTION match_expire_holds(uuid[], timestamptz) IS
    'Expired payment holds among the ids -> CANCELLED (PAYMENT_EXPIRED), organizer told.';

-- Cancels each given match still OPEN at its start (CANCEL_UNFILLED), everyone refunded.
CREATE FUNCTION match_cancel_unfilled(p_ids uuid[], p_now timestamptz DEFAULT now(),
                                      OUT ended uuid[], OUT invitations_expired integer)
    LANGUAGE sql
AS $$
    SELECT * FROM match_end(ARRAY(SELECT id FROM match_requests
                            WHERE id = ANY (p_ids) AND status = 'OPEN'
                              AND starts_at <= p_now), 'CANCEL_UNFILLED', p_now);
$$;
COMMENT ON FUNCTION match_cancel_unfilled(uuid[], timestamptz) IS
    'Matches still OPEN at their start -> CANCELLED (NOT_FILLED), everyone refunded and told.';

-- Completes each given match MATCHED or CONFIRMED past its end (COMPLETE): every player in it
-- is told MATCH_COMPLETED and gets one reliability event, ATTENDED when checked in, NO_SHOW
-- otherwise. Returns (completed, no-shows recorded).
CREATE FUNCTION match_complete(p_ids uuid[], p_now timestamptz DEFAULT now(),
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

-- Sweeper batches: each claims at most p_limit rows that time has decided, skipping rows
-- another transaction holds, and applies the transition above. Two sweepers share the work.
CREATE FUNCTION sweep_expired_holds(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE sql
AS $$
    SELECT cardinality(ended) FROM match_expire_holds(ARRAY(
        SELECT id FROM match_requests
         WHERE status = 'PENDING_PAYMENT' AND expires_at <= p_now
         ORDER BY expires_at LIMIT p_limit
           FOR UPDATE SKIP LOCKED), p_now);
$$;
COMMENT ON FUNCTION sweep_expired_holds(integer, timestamptz) IS 'Sweeper rule 1: a batch of expired holds.';

CREATE FUNCTION sweep_unfilled(p_limit integer, p_now timestamptz DEFAULT now(),
                               OUT unfilled integer, OUT invitations_expired integer)
    LANGUAGE sql
AS $$
    SELECT cardinality(ended), invitations_expired FROM match_cancel_unfilled(ARRAY(
        SELECT id FROM match_requests
         WHERE status = 'OPEN' AND starts_at <= p_now
         ORDER BY starts_at LIMIT p_limit
           FOR UPDATE SKIP LOCKED), p_now);
$$;
COMMENT ON FUNCTION sweep_unfilled(integer, timestamptz) IS 'Sweeper rule 2: a batch of matches not filled by their start.';

-- Completions take turns, each batch the matches that ended first (ties by id), so that
-- scores move by attendance in the order matches ended, however the work is batched or
-- shared: a second sweeper waits here for the first's batch, then takes the next ones.
CREATE FUNCTION sweep_completed(p_limit integer, p_now timestamptz DEFAULT now(),
                                OUT completed integer, OUT no_shows integer)
    LANGUAGE sql
AS $$
    SELECT pg_advisory_xact_lock(hashtext('sweep_completed'));
    SELECT * FROM match_complete(ARRAY(
        SELECT id FROM match_requests
         WHERE status IN ('MATCHED', 'CONFIRMED') AND ends_at <= p_now
         ORDER BY ends_at, id LIMIT p_limit
           FOR UPDATE SKIP LOCKED), p_now);
$$;
COMMENT ON FUNCTION sweep_completed(integer, timestamptz) IS 'Sweeper rule 3: a batch of finished matches.';

-- Invitations the other transitions did not end: of matches no longer OPEN, or started.
CREATE FUNCTION sweep_invitations(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE sql
AS $$
    SELECT invitations_expire(ARRAY(
        SELECT i.id FROM invitations i JOIN match_requests m ON m.id = i.match_request_id
         WHERE i.status = 'PENDING' AND (m.status <> 'OPEN' OR m.starts_at <= p_now)
         LIMIT p_limit
           FOR UPDATE OF i SKIP LOCKED));
$$;
COMMENT ON FUNCTION sweep_invitations(integer, timestamptz) IS 'Sweeper rule 4: a batch of stale invitations.';

-- ---- transitions of one match, for the API ----------------------------------------------

-- Locks match p_match for a transition by p_player, who must be in it: the row, or 404.
CREATE FUNCTION match_lock(p_match uuid, p_player uuid)
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

-- HOLD: opens a match on a free slot, held for p_hold_seconds until the organizer pays.
-- 404 NOT_FOUND (court unknown or not visible), 409 SLOT_NOT_OFFERED, SLOT_IN_PAST,
-- NOT_BOOKABLE, SLOT_TAKEN (the exclusion constraint). A lapsed hold on the slot is ended
-- first, so it never blocks, whether or not the sweeper ran. Also 409 HOLD_LIMIT past
-- p_max_holds live unpaid holds of the organizer, and the venue's booking rules (0012).
-- Returns the new match's id.
CREATE FUNCTION match_hold(p_resource uuid, p_organizer uuid, p_date date, p_start time,
                           p_duration integer, p_format text, p_skill text, p_message text,
                           p_lat double precision, p_lng double precision, p_radius numeric,
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
    v_entry uuid;
BEGIN
    SELECT rs.slot_duration_minutes = p_duration, s.end_time,
           (p_date + p_start) AT TIME ZONE v.timezone <= p_now, s.price, s.currency, v.timezone
      INTO v_dur_ok, v_end, v_past, v_price, v_currency, v_tz
      FROM resources rs
      JOIN venues v ON v.id = rs.venue_id
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
    -- fair use (0012): the player's unpaid holds and the club's booking rules
    PERFORM hold_limit_check(p_organizer, p_max_holds, p_now);
    PERFORM booking_rules_check(p_resource, p_organizer, (p_date + p_start) AT TIME ZONE v_tz, p_now);
    PERFORM match_expire_holds(ARRAY(
        SELECT m.id FROM match_requests m
         WHERE m.resource_id = p_resource AND m.status = 'PENDING_PAYMENT'
           AND m.expires_at <= p_now
           AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time)
               && tsrange(p_date + p_start, p_date + v_end)
           FOR UPDATE), p_now);
    SELECT team_size INTO v_size FROM match_formats WHERE format = p_format;
    INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time, end_time,
                                starts_at, ends_at, format, skill_level, status, team_size,
                                court_price, price_per_player, currency, custom_message,
                                search_latitude, search_longitude, search_radius_km,
                                expires_at, created_at, updated_at)
    SELECT p_resource, p_organizer, p_date, p_start, v_end,
           (p_date + p_start) AT TIME ZONE v_tz, (p_date + v_end) AT TIME ZONE v_tz,
           p_format, p_skill, t.to_status, v_size, v_price,
           floor(v_price * 100 / (2 * v_size)) / 100, v_currency, p_message,
           p_lat, p_lng, p_radius, p_now + make_interval(secs => p_hold_seconds), p_now, p_now
      FROM match_transitions t WHERE t.from_status = 'NONE' AND t.event = 'HOLD'
    RETURNING id INTO v_id;
    INSERT INTO match_status_changes (match_request_id, event, from_status, to_status, changed_at)
    SELECT v_id, 'HOLD', 'NONE', status, p_now FROM match_requests WHERE id = v_id;
    INSERT INTO match_players (match_request_id, player_id, team, role, joined_at)
    VALUES (v_id, p_organizer, 'TEAM_A', 'ORGANIZER', p_now)
    RETURNING id INTO v_entry;
    -- the organizer's share takes the cents that do not divide evenly
    INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
                          entry_id, created_at, updated_at)
    SELECT id, organizer_id, 'PAYMENT', court_price - price_per_player * (2 * team_size - 1),
           currency, 'PENDING', v_entry, p_now, p_now
      FROM match_requests WHERE id = v_id;
    RETURN v_id;
END $$;
COMMENT ON FUNCTION match_hold(uuid, uuid, date, time, integer, text, text, text, double precision,
                               double precision, numeric, integer, timestamptz, integer) IS
    'HOLD: a new match on a free slot, awaiting the organizer''s payment.';

-- PAY: the organizer confirms payment within the window: OPEN, payment PAID, eligible players
-- invited. 404, 403 NOT_ORGANIZER, 409 PAYMENT_WINDOW_PASSED (the caller then ends the hold
-- with match_expire_holds in a transaction of its own), INVALID_STATE.
CREATE FUNCTION match_pay(p_match uuid, p_player uuid, p_min_reliability integer,
                          p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
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
    PERFORM match_move(ARRAY[p_match], 'PAY', p_now);
    UPDATE payments p SET status = 'PAID', updated_at = p_now
      FROM match_players mp
     WHERE mp.match_request_id = p_match AND mp.player_id = p_player AND mp.left_at IS NULL
       AND p.entry_id = mp.id AND p.kind = 'PAYMENT' AND p.status = 'PENDING';
    PERFORM match_invite(p_match, 'INVITE', p_min_reliability, p_now);
END $$;
COMMENT ON FUNCTION match_pay(uuid, uuid, integer, timestamptz) IS
    'PAY: confirms the organizer''s payment, opens the match and invites eligible players.';

-- JOIN of a locked match m by p_player on p_team, through invitation p_invitation when given
-- (it must still be PENDING) or by the shareable link (a pending invitation of the player is
-- accepted on the way): a new join with its PAID payment of the player's share, the others
-- told PLAYER_JOINED; when that fills the match, MATCHED, its pending invitations EXPIRED and
-- everyone told MATCH_FULL. 409 INVALID_STATE, MATCH_NOT_OPEN, MATCH_STARTED,
-- ALREADY_IN_MATCH, TEAM_FULL (the capacity CHECK is the last guard).
CREATE FUNCTION match_join_locked(m match_requests, p_player uuid, p_team text,
                                  p_invitation uuid, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_accepted integer;
    v_entry uuid;
BEGIN
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
    IF (CASE WHEN p_team = 'TEAM_A' THEN m.team_a_count ELSE m.team_b_count END) >= m.team_size THEN
        PERFORM lifecycle_fail(409, 'TEAM_FULL', 'The chosen team has no free place.');
    END IF;
    PERFORM booking_rules_check(m.resource_id, p_player, m.starts_at, p_now);
    WITH a AS (UPDATE invitations SET status = 'ACCEPTED', responded_at = p_now
                WHERE match_request_id = m.id AND player_id = p_player AND status = 'PENDING'
               RETURNING 1)
    SELECT count(*) INTO v_accepted FROM a;
    IF p_invitation IS NOT NULL AND v_accepted = 0 THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE',
            'The invitation was already answered or has expired.');
    END IF;
    INSERT INTO match_players (match_request_id, player_id, team, role, joined_at)
    VALUES (m.id, p_player, p_team, 'PLAYER', p_now)
    RETURNING id INTO v_entry;
    INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
                          entry_id, created_at, updated_at)
    VALUES (m.id, p_player, 'PAYMENT', m.price_per_player, m.currency, 'PAID', v_entry,
            p_now, p_now);
    PERFORM notify(match_active_players(m.id, p_player), 'PLAYER_JOINED',
                   jsonb_build_object('matchRequestId', m.id, 'playerId', p_player,
                                      'team', p_team), p_now);
    IF NOT (SELECT team_a_count + team_b_count = 2 * team_size FROM match_requests
             WHERE id = m.id) THEN
        RETURN;
    END IF;
    PERFORM match_move(ARRAY[m.id], 'JOIN', p_now);
    PERFORM invitations_expire(match_pending_invitations(ARRAY[m.id]));
    PERFORM notify(match_active_players(m.id), 'MATCH_FULL',
                   jsonb_build_object('matchRequestId', m.id), p_now);
END $$;
COMMENT ON FUNCTION match_join_locked(match_requests, uuid, text, uuid, timestamptz) IS
    'JOIN of a locked match: place, payment, notices, and MATCHED when full.';

-- JOIN by invitation: 404 NOT_FOUND unless it is the caller's invitation. Returns the match.
CREATE FUNCTION match_accept_invitation(p_invitation uuid, p_player uuid, p_team text,
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
CREATE FUNCTION match_join_by_token(p_token uuid, p_player uuid, p_team text,
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

-- DECLINE of an invitation of the caller: 404, 409 INVALID_STATE unless PENDING.
CREATE FUNCTION match_decline_invitation(p_invitation uuid, p_player uuid,
                                         p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE invitations SET status = 'DECLINED', responded_at = p_now
     WHERE id = p_invitation AND player_id = p_player AND status = 'PENDING';
    IF FOUND THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM invitations WHERE id = p_invitation AND player_id = p_player) THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE',
            'The invitation was already answered or has expired.');
    END IF;
    PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Invitation not found.');
END $$;
COMMENT ON FUNCTION match_decline_invitation(uuid, uuid, timestamptz) IS
    'DECLINE: the caller turns down a pending invitation.';

-- Takes p_player out of locked match m (LEAVE or ABSENCE): the join ends with p_reason, a
-- MATCHED match is OPEN again, the others are told. Returns the join that ended.
CREATE FUNCTION match_withdraw(m match_requests, p_player uuid, p_event text, p_now timestamptz)
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    v_entry uuid;
BEGIN
    UPDATE match_players SET left_at = p_now, left_reason = CASE p_event WHEN 'LEAVE' THEN 'LEFT' ELSE 'ABSENT' END
     WHERE match_request_id = m.id AND player_id = p_player AND left_at IS NULL AND role = 'PLAYER'
    RETURNING id INTO v_entry;
    PERFORM match_move(ARRAY[m.id], p_event, p_now);
    PERFORM notify(match_active_players(m.id), CASE p_event WHEN 'LEAVE' THEN 'PLAYER_LEFT' ELSE 'PLAYER_ABSENT' END,
                   jsonb_build_object('matchRequestId', m.id, 'playerId', p_player), p_now);
    RETURN v_entry;
END $$;
COMMENT ON FUNCTION match_withdraw(match_requests, uuid, text, timestamptz) IS
    'Ends a player''s join by LEAVE or ABSENCE, reopening a full match and telling the others.';

-- LEAVE: a player (not the organizer) of an OPEN or MATCHED match, more than leave_notice
-- ahead: out, the payment of this join refunded in full. 404, 409 ORGANIZER_CANNOT_LEAVE,
-- INVALID_STATE, LEAVE_TOO_LATE.
CREATE FUNCTION match_leave(p_match uuid, p_player uuid, p_now timestamptz DEFAULT now())
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
    v_entry := match_withdraw(m, p_player, 'LEAVE', p_now);
    PERFORM payments_refund(ARRAY(SELECT id FROM payments WHERE entry_id = v_entry
                                                            AND kind = 'PAYMENT'), p_now);
END $$;
COMMENT ON FUNCTION match_leave(uuid, uuid, timestamptz) IS
    'LEAVE: a player withdraws well ahead and is refunded the payment of this join.';

-- ABSENCE: a player (not the organizer) of an OPEN or MATCHED match, before the start: out
-- without refund, substitutes invited, and inside late_absence_window a LATE_ABSENCE. 404,
-- 409 ORGANIZER_CANNOT_LEAVE, INVALID_STATE, MATCH_STARTED.
CREATE FUNCTION match_absence(p_match uuid, p_player uuid, p_min_reliability integer,
                              p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
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
    PERFORM match_withdraw(m, p_player, 'ABSENCE', p_now);
    PERFORM match_invite(p_match, 'SUBSTITUTE', p_min_reliability, p_now);
    IF m.starts_at - p_now < (SELECT late_absence_window FROM match_policy) THEN
        PERFORM reliability_apply(ARRAY[p_player], ARRAY[p_match], ARRAY['LATE_ABSENCE'], p_now);
    END IF;
END $$;
COMMENT ON FUNCTION match_absence(uuid, uuid, integer, timestamptz) IS
    'ABSENCE: a late withdrawal without refund; substitutes invited, late ones cost reliability.';

-- CHECKIN: a player of a MATCHED or CONFIRMED match, from checkin_opens_before the start to
-- the end, accurate and near enough; when everyone is, CONFIRMED and all told. A repeat is a
-- no-op. 404, 409 INVALID_STATE, CHECKIN_TOO_EARLY, CHECKIN_CLOSED, INACCURATE_POSITION,
-- TOO_FAR.
CREATE FUNCTION match_checkin(p_match uuid, p_player uuid, p_lat double precision,
                              p_lng double precision, p_accuracy double precision,
                              p_radius_m integer, p_max_accuracy_m integer,
                              p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
    v_far boolean;
    v_moved integer;
BEGIN
    IF m.status NOT IN ('MATCHED', 'CONFIRMED') THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE', 'Check-in opens once the match is full.');
    END IF;
    IF EXISTS (SELECT 1 FROM match_players WHERE match_request_id = p_match AND player_id = p_player
                  AND left_at IS NULL AND checked_in_at IS NOT NULL) THEN
        RETURN;
    END IF;
    IF p_now < m.starts_at - (SELECT checkin_opens_before FROM match_policy) THEN
        PERFORM lifecycle_fail(409, 'CHECKIN_TOO_EARLY',
            format('Check-in opens %s minutes before the start.',
                   (SELECT extract(epoch FROM checkin_opens_before)::bigint / 60 FROM match_policy)));
    END IF;
    IF p_now > m.ends_at THEN
        PERFORM lifecycle_fail(409, 'CHECKIN_CLOSED', 'The match is over.');
    END IF;
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
    UPDATE match_players SET checked_in_at = p_now
     WHERE match_request_id = p_match AND player_id = p_player AND left_at IS NULL;
    IF EXISTS (SELECT 1 FROM match_players WHERE match_request_id = p_match
                  AND left_at IS NULL AND checked_in_at IS NULL) THEN
        RETURN;
    END IF;
    SELECT count(*) INTO v_moved FROM match_move(ARRAY[p_match], 'CHECKIN', p_now);
    IF v_moved > 0 THEN
        PERFORM notify(match_active_players(p_match), 'MATCH_CONFIRMED',
                       jsonb_build_object('matchRequestId', p_match), p_now);
    END IF;
END $$;
COMMENT ON FUNCTION match_checkin(uuid, uuid, double precision, double precision,
                                  double precision, integer, integer, timestamptz) IS
    'CHECKIN: attendance by GPS; the last one confirms the match.';

-- CANCEL by the organizer before the start, from PENDING_PAYMENT, OPEN or MATCHED (see
-- match_end for refunds and notices). Cancelling a cancelled match is a no-op; a hold past its
-- window ends as an expired hold instead. 404, 403 NOT_ORGANIZER, 409 INVALID_STATE,
-- MATCH_STARTED.
CREATE FUNCTION match_cancel(p_match uuid, p_player uuid, p_now timestamptz DEFAULT now())
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

