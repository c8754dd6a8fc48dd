-- 0040_sweep_fewer_lookups: the sweeper ends a lapsed hold with two look-ups of its match
-- fewer, and none of its payments by key.
--
-- Index statistics of five batches of 1,000 lapsed holds on the bench's CITY data: each hold
-- cost five descents of match_requests_pkey and one of payments_pkey, besides the writes.
-- Three of them found nothing the batch needed:
-- - match_expire_holds (0010) read each hold again to test that it was still a lapsed hold,
--   which the sweeper's claim had just tested, with the row locked (FOR UPDATE, in the same
--   statement);
-- - match_end (0010) passed every payment of the players to payments_refund, which looked
--   each one up by key to find that only PAID ones are refunded: a hold's payment is PENDING;
-- - match_end's notices joined the match for its cancel reason, which an expired hold's
--   notice does not carry.
-- Now the sweeper's claim hands its rows to match_end itself, match_end passes only PAID
-- payments on, and reads the match for a notice only when the notice carries its reason.
-- Same rows written, same notices, same refunds: a batch of 1,000 took 90.8-93.2 ms against
-- 101.7-103.0 ms (medians of three paired runs). A batch of 3,000 or 6,000 costs the same
-- per hold as one of 1,000 (105-107 ms per 1,000), so SWEEP_BATCH stays 1,000.

-- (0010, restated) the refunds read PAID payments only; the notices of an expired hold do
-- not read the match.
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
    UPDATE payments SET status = 'CANCELLED', updated_at = p_now
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
           END,
           p_now
      FROM match_players mp
      -- the reason, for the notices that carry it (the match is there: the players' key)
      LEFT JOIN match_requests m ON m.id = mp.match_request_id AND p_event <> 'EXPIRE_HOLD'
     WHERE mp.match_request_id = ANY (v_ended) AND mp.left_at IS NULL;
END $$;

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
