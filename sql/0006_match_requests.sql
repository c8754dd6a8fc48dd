-- 0006_match_requests: the state changes of a match request that more than one program
-- makes, defined once. match_hold_expire() is how a lapsed payment hold ends, whether a new
-- request on the same slot, a late payment confirmation or the cron sweeper finds it first;
-- reliability_record() is the one way a reliability score changes.

-- Ends one PENDING_PAYMENT hold whose payment window has passed: the request becomes
-- CANCELLED (PAYMENT_EXPIRED), the organizer's pending payment CANCELLED, and the organizer
-- is told PAYMENT_EXPIRED. Guarded: a hold that is still in its window, already ended or
-- paid is left alone, so concurrent callers end it (and notify) exactly once.
CREATE FUNCTION match_hold_expire(p_match uuid) RETURNS boolean
    LANGUAGE plpgsql
AS $$
DECLARE
    v_organizer uuid;
BEGIN
    UPDATE match_requests
       SET status = 'CANCELLED', cancel_reason = 'PAYMENT_EXPIRED', updated_at = now()
     WHERE id = p_match AND status = 'PENDING_PAYMENT' AND expires_at <= now()
    RETURNING organizer_id INTO v_organizer;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE payments
       SET status = 'CANCELLED', updated_at = now()
     WHERE match_request_id = p_match AND kind = 'PAYMENT' AND status = 'PENDING';
    INSERT INTO notifications (recipient_id, type, payload)
    VALUES (v_organizer, 'PAYMENT_EXPIRED', jsonb_build_object('matchRequestId', p_match));
    RETURN true;
END $$;
COMMENT ON FUNCTION match_hold_expire(uuid) IS
    'Cancels a lapsed payment hold (PAYMENT_EXPIRED), its pending payment, and tells the organizer; true if it did.';

-- Records a reliability event once per (player, match, kind) and applies its delta to the
-- player's score, clamped to 0..100; a user without a profile gets one (score from 100).
-- Returns false, changing nothing, when the event was already recorded.
CREATE FUNCTION reliability_record(p_player uuid, p_match uuid, p_kind text, p_delta integer)
    RETURNS boolean
    LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO reliability_events (player_id, match_request_id, kind, delta)
    VALUES (p_player, p_match, p_kind, p_delta)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO players (user_id, reliability_score)
    VALUES (p_player, greatest(0, least(100, 100 + p_delta)))
    ON CONFLICT (user_id) DO UPDATE
       SET reliability_score = greatest(0, least(100, players.reliability_score + p_delta)),
           updated_at = now();
    RETURN true;
END $$;
COMMENT ON FUNCTION reliability_record(uuid, uuid, text, integer) IS
    'Records a reliability event once and applies its delta, clamped to 0..100; true if new.';

-- Invites to a match every eligible player (0005_eligibility.sql, around the request's search
-- centre, at its skill level) who never played in it and was not invited yet, and tells each
-- one: kind INVITE (after payment) notifies MATCH_INVITATION, SUBSTITUTE (after an absence)
-- SUBSTITUTE_INVITATION, with {matchRequestId, invitationId}. Returns how many were invited.
CREATE FUNCTION match_invite(p_match uuid, p_kind text, p_min_reliability integer)
    RETURNS integer
    LANGUAGE sql
AS $$
    WITH inv AS (
        INSERT INTO invitations (match_request_id, player_id, kind)
        SELECT m.id, e.user_id, p_kind
          FROM match_requests m
         CROSS JOIN LATERAL eligible_players(m.search_latitude, m.search_longitude,
                                             m.search_radius_km, m.skill_level,
                                             p_min_reliability) e
         WHERE m.id = p_match
           AND NOT EXISTS (SELECT 1 FROM match_players mp
                            WHERE mp.match_request_id = m.id AND mp.player_id = e.user_id)
        ON CONFLICT (match_request_id, player_id) DO NOTHING
        RETURNING id, player_id),
    sent AS (
        INSERT INTO notifications (recipient_id, type, payload)
        SELECT inv.player_id,
               CASE p_kind WHEN 'SUBSTITUTE' THEN 'SUBSTITUTE_INVITATION' ELSE 'MATCH_INVITATION' END,
               jsonb_build_object('matchRequestId', p_match, 'invitationId', inv.id)
          FROM inv)
    SELECT count(*)::integer FROM inv;
$$;
COMMENT ON FUNCTION match_invite(uuid, text, integer) IS
    'Invites (INVITE or SUBSTITUTE) and notifies the eligible players not yet in or invited to a match; returns the count.';
