-- 0028_sweep_offers_batches: the offers rule says how many matches a batch claimed.
--
-- cron/sweep.c runs each rule in batches until one comes back short of its limit, and reads
-- the first number a batch answers as the rows it claimed. sweep_offers answered the offers
-- that lapsed, which is fewer than the matches it settled whenever a match had only a
-- hand-over window to close (its substitute declined, or the stale-invitation rule had
-- already ended the invitation of a match cancelled or started): a full batch of such
-- matches looked short, and the sweeper stopped with hand-overs of other matches still OPEN
-- past their window and their deferred LATE_ABSENCE not applied until a later run or the
-- match's next write. It now answers both counts, as sweep_unfilled and sweep_completed do.

DROP FUNCTION sweep_offers(integer, timestamptz);

-- (0025, restated with two counts) Sweeper rule: the matches with lapsed offers, hand-overs
-- or granted places, or hand-over windows that closed, settled (match_offers_settle).
-- settled: the matches claimed; lapsed: the offers, hand-overs and granted places that
-- lapsed. (The kinds are spelled out as invitations_open_offers_idx's predicate has them.)
CREATE FUNCTION sweep_offers(p_limit integer, p_now timestamptz DEFAULT now(),
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
