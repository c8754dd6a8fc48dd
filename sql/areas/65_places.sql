-- The places of a match besides joining it: waiting lists with their timed offers,
-- hand-overs of a place to a substitute, and place requests from players of another level.
--
-- - Waiting list: a player queues for a full PUBLIC match, for one team or either. When a
--   place frees, the first player on the list still free to play (not banned, in no match at
--   that time) gets an OFFER, an invitation for that team's place that only they can take
--   until match_policy.offer_window passes; declined or lapsed, it passes to the next, and
--   with nobody left the place is open to anyone.
-- - Hand-over: a leave or an absence may name a substitute, who gets a HANDOVER invitation
--   for the place, held as an offer is; declined or lapsed, the place goes to the waiting
--   list, then to SUBSTITUTE invitations. Until handover_notice before the start, whoever
--   takes and pays a place of that team refills it: the leaver is refunded and a late absence
--   costs nothing, so its penalty waits until the window closes unfilled.
-- - Place request: a player not of a competitive match's level asks the players in it, who
--   approve or reject (see the section below).
--
-- The guard: match_requests counts each team's pending invitations that hold a place
-- (offers_a, offers_b, kept by invitations_count_offers), and a CHECK keeps players plus
-- held places within the team's size, so a place is never offered twice, nor both offered
-- and taken, whatever the code does. Lapsed ones are passed on by every write of the match's
-- places (match_offers_settle, first) and by the sweeper (sql/areas/95_sweeper.sql), so the
-- list moves with or without cron. The joins and withdrawals of sql/areas/60_lifecycle.sql
-- call in here; these functions use its building blocks in turn (lifecycle_fail,
-- payments_refund, match_invite, reliability_apply), booking_rules_check
-- (sql/areas/55_fair_use.sql) and match_player_level (sql/areas/40_players.sql).

-- The places of a match that no player takes and no open offer holds: the availableSlots of
-- the match and invitation objects. (A body in quotes: it depends on no column, so the
-- table may gain more.)
CREATE OR REPLACE FUNCTION match_places_free(m match_requests) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT 2 * m.team_size - m.team_a_count - m.team_b_count - m.offers_a - m.offers_b;
$$;
COMMENT ON FUNCTION match_places_free(match_requests) IS
    'Places of a match no player takes and no open offer holds.';

-- Keeps offers_a / offers_b: every invitation that holds a place (invitation_holds_place)
-- counts while PENDING, in its team; it starts by insert or by an update that makes a row
-- one, and stops by update or delete.
CREATE OR REPLACE FUNCTION invitations_count_offers() RETURNS trigger
    LANGUAGE plpgsql
AS $$
DECLARE
    v_old boolean := TG_OP <> 'INSERT' AND invitation_holds_place(OLD.kind)
                     AND OLD.status = 'PENDING';
    v_new boolean := TG_OP <> 'DELETE' AND invitation_holds_place(NEW.kind)
                     AND NEW.status = 'PENDING';
BEGIN
    IF v_old AND (NOT v_new OR OLD.team <> NEW.team) THEN
        UPDATE match_requests
           SET offers_a = offers_a - (OLD.team = 'TEAM_A')::int,
               offers_b = offers_b - (OLD.team = 'TEAM_B')::int
         WHERE id = OLD.match_request_id;
    END IF;
    IF v_new AND (NOT v_old OR OLD.team <> NEW.team) THEN
        UPDATE match_requests
           SET offers_a = offers_a + (NEW.team = 'TEAM_A')::int,
               offers_b = offers_b + (NEW.team = 'TEAM_B')::int
         WHERE id = NEW.match_request_id;
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION invitations_count_offers() IS 'Row trigger: keeps the open offers of each team on the match.';

CREATE OR REPLACE TRIGGER invitations_count_offers AFTER INSERT OR UPDATE OF kind, status, team OR DELETE
    ON invitations FOR EACH ROW EXECUTE FUNCTION invitations_count_offers();

-- Offers the free places of locked match p_match that no offer holds yet to the first free
-- players on its waiting list, a place per player, in list order; each offered player leaves
-- the list and is told PLACE_OFFERED {matchRequestId, invitationId, team, expiresAt}. Only
-- for an OPEN match that has not started. Returns how many offers were made.
CREATE OR REPLACE FUNCTION match_offer_places(p_match uuid, p_now timestamptz)
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
    w match_waitlist;
    v_team text;
    v_inv uuid;
    v_made integer := 0;
BEGIN
    LOOP
        SELECT * INTO m FROM match_requests WHERE id = p_match;
        IF m.status <> 'OPEN' OR m.starts_at <= p_now THEN
            RETURN v_made;
        END IF;
        -- the first entry that wants a team with a place no offer holds, and is free
        SELECT e.* INTO w FROM match_waitlist e
         WHERE e.match_request_id = p_match AND e.ended_at IS NULL
           AND ((e.team IN ('TEAM_A', 'ANY') AND m.team_a_count + m.offers_a < m.team_size)
             OR (e.team IN ('TEAM_B', 'ANY') AND m.team_b_count + m.offers_b < m.team_size))
           AND offer_candidate_free(m, e.player_id, p_now)
         ORDER BY e.joined_at, e.id
         LIMIT 1;
        IF NOT FOUND THEN
            RETURN v_made;
        END IF;
        v_team := CASE WHEN w.team <> 'ANY' THEN w.team
                       WHEN m.team_a_count + m.offers_a < m.team_size THEN 'TEAM_A'
                       ELSE 'TEAM_B' END;
        UPDATE match_waitlist SET ended_at = p_now, ended_reason = 'OFFERED' WHERE id = w.id;
        INSERT INTO invitations (match_request_id, player_id, kind, status, team, expires_at,
                                 sent_at, responded_at)
        SELECT p_match, w.player_id, 'OFFER', 'PENDING', v_team, p_now + pol.offer_window,
               p_now, NULL
          FROM match_policy pol
        ON CONFLICT (match_request_id, player_id) DO UPDATE
           SET kind = 'OFFER', status = 'PENDING', team = EXCLUDED.team,
               expires_at = EXCLUDED.expires_at, sent_at = EXCLUDED.sent_at, responded_at = NULL
        RETURNING id INTO v_inv;
        PERFORM notify(ARRAY[w.player_id], 'PLACE_OFFERED',
                       jsonb_build_object('matchRequestId', p_match, 'invitationId', v_inv,
                                          'team', v_team,
                                          'expiresAt', (SELECT api_ts(expires_at) FROM invitations
                                                         WHERE id = v_inv)), p_now);
        v_made := v_made + 1;
    END LOOP;
END $$;
COMMENT ON FUNCTION match_offer_places(uuid, timestamptz) IS
    'Offers a locked match''s unheld free places to the first free players on its waiting list.';

-- UNWAITLIST: p_player leaves the waiting list of p_match. 404 NOT_FOUND when not on it.
CREATE OR REPLACE FUNCTION match_waitlist_leave(p_match uuid, p_player uuid, p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE match_waitlist SET ended_at = p_now, ended_reason = 'LEFT'
     WHERE match_request_id = p_match AND player_id = p_player AND ended_at IS NULL;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'You are not on this waiting list.');
    END IF;
END $$;
COMMENT ON FUNCTION match_waitlist_leave(uuid, uuid, timestamptz) IS
    'UNWAITLIST: a player leaves a waiting list.';

-- A match that ends (match_end: cancelled, lapsed unpaid, not filled), is completed, or is
-- confirmed (everyone checked in, so no place frees any more) ends its waiting list.
CREATE OR REPLACE FUNCTION match_waitlist_end() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE match_waitlist SET ended_at = NEW.updated_at, ended_reason = 'MATCH_ENDED'
     WHERE match_request_id = NEW.id AND ended_at IS NULL;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION match_waitlist_end() IS 'Row trigger: a match that is over or cancelled has no waiting list.';

CREATE OR REPLACE TRIGGER match_requests_waitlist_end AFTER UPDATE OF status ON match_requests
    FOR EACH ROW WHEN (NEW.status IN ('CANCELLED', 'COMPLETED', 'CONFIRMED')
                       AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION match_waitlist_end();

-- The match of invitation p_invitation (or of the shareable token p_token), locked, with its
-- lapsed offers passed on: what the API runs, in a transaction of its own, after a join it
-- refused because of a lapsed offer (the player's own, INVALID_STATE, or one still holding
-- the place, TEAM_FULL): the refusal rolls back what the join had settled. Returns how many
-- offers lapsed.
CREATE OR REPLACE FUNCTION match_offers_settle_of(p_invitation uuid, p_token uuid,
                                                  p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_match uuid;
BEGIN
    SELECT m.id INTO v_match FROM match_requests m
     WHERE m.invitation_token = p_token
        OR m.id = (SELECT i.match_request_id FROM invitations i WHERE i.id = p_invitation)
       FOR UPDATE;
    RETURN CASE WHEN FOUND THEN match_offers_settle(v_match, p_now) ELSE 0 END;
END $$;
COMMENT ON FUNCTION match_offers_settle_of(uuid, uuid, timestamptz) IS
    'Passes on the lapsed offers of the match of an invitation or token; returns how many lapsed.';

-- Whether p_player is free to be offered a place in match m at p_now: not banned, not in it,
-- and in no other live match overlapping it (match_player_busy).
CREATE OR REPLACE FUNCTION offer_candidate_free(m match_requests, p_player uuid, p_now timestamptz)
    RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    free boolean;
BEGIN
    SELECT NOT EXISTS (SELECT 1 FROM players p
                        WHERE p.user_id = p_player AND p.banned_until > p_now)
       AND NOT match_player_busy(m, p_player)
      INTO free;
    RETURN free;
END $$;
COMMENT ON FUNCTION offer_candidate_free(match_requests, uuid, timestamptz) IS
    'A player may be offered a place in a match: not banned, not in it, no overlapping match.';

-- ---- hand-overs -----------------------------------------------------------------------------
-- The hand-over itself (match_handovers) lasts until handover_notice before the start: its
-- refill window. One started after that is LAPSED from the start: the substitute is still
-- offered the place, and a late absence's penalty is immediate. A leave is refunded when it
-- happens, so its hand-over refunds nothing more: it only gives the substitute the place
-- first.

-- Starts the hand-over of the place p_player left in team p_team of locked match p_match
-- (join p_entry, ended by p_event): p_substitute gets a HANDOVER invitation for it, leaves
-- the match's waiting list and is told HANDOVER_OFFERED {matchRequestId, invitationId, team,
-- expiresAt, fromPlayerId}. 404 SUBSTITUTE_NOT_FOUND (no such user), 409
-- SUBSTITUTE_UNAVAILABLE (the leaver, or a player in this match or in another at that time).
-- A ban does not stop a hand-over: the leaver chose the player, as a shared link would.
-- Returns whether the refill window is open (a late penalty then waits for it).
CREATE OR REPLACE FUNCTION match_handover_start(p_match uuid, p_player uuid, p_entry uuid, p_team text,
                                                p_event text, p_substitute uuid, p_min_reliability integer,
                                                p_late boolean, p_now timestamptz)
    RETURNS boolean
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
    v_inv invitations;
    v_window_ends timestamptz;
BEGIN
    SELECT * INTO m FROM match_requests WHERE id = p_match;
    IF NOT EXISTS (SELECT 1 FROM users WHERE id = p_substitute) THEN
        PERFORM lifecycle_fail(404, 'SUBSTITUTE_NOT_FOUND', 'Substitute player not found.');
    END IF;
    IF p_substitute = p_player OR match_player_busy(m, p_substitute) THEN
        PERFORM lifecycle_fail(409, 'SUBSTITUTE_UNAVAILABLE',
            'The substitute already plays in this match or in another at that time.');
    END IF;
    INSERT INTO invitations (match_request_id, player_id, kind, status, team, expires_at,
                             sent_at, responded_at)
    SELECT p_match, p_substitute, 'HANDOVER', 'PENDING', p_team, p_now + pol.offer_window,
           p_now, NULL
      FROM match_policy pol
    ON CONFLICT (match_request_id, player_id) DO UPDATE
       SET kind = 'HANDOVER', status = 'PENDING', team = EXCLUDED.team,
           expires_at = EXCLUDED.expires_at, sent_at = EXCLUDED.sent_at, responded_at = NULL
    RETURNING * INTO v_inv;
    UPDATE match_waitlist SET ended_at = p_now, ended_reason = 'OFFERED'
     WHERE match_request_id = p_match AND player_id = p_substitute AND ended_at IS NULL;
    v_window_ends := m.starts_at - (SELECT handover_notice FROM match_policy);
    INSERT INTO match_handovers (match_request_id, player_id, entry_id, team, substitute_id,
                                 invitation_id, event, late_penalty, min_reliability,
                                 window_ends_at, status, created_at, settled_at)
    VALUES (p_match, p_player, p_entry, p_team, p_substitute, v_inv.id, p_event,
            p_late AND p_now < v_window_ends, p_min_reliability, v_window_ends,
            CASE WHEN p_now < v_window_ends THEN 'OPEN' ELSE 'LAPSED' END, p_now,
            CASE WHEN p_now < v_window_ends THEN NULL ELSE p_now END);
    PERFORM notify(ARRAY[p_substitute], 'HANDOVER_OFFERED',
                   jsonb_build_object('matchRequestId', p_match, 'invitationId', v_inv.id,
                                      'team', p_team, 'expiresAt', api_ts(v_inv.expires_at),
                                      'fromPlayerId', p_player), p_now);
    RETURN p_now < v_window_ends;
END $$;
COMMENT ON FUNCTION match_handover_start(uuid, uuid, uuid, text, text, uuid, integer, boolean, timestamptz) IS
    'Gives a freed place to the leaver''s substitute (HANDOVER invitation) and opens the refill window.';

-- A join p_entry of p_player into team p_team of locked match p_match, paid: the open
-- hand-over of that team it refills (the one handed to this player first, else the first made)
-- is REFILLED, the leaver's payment refunded (once; a leave's was already) and the leaver
-- told PLACE_HANDED_OVER {matchRequestId, playerId, refund}.
CREATE OR REPLACE FUNCTION match_handover_refill(p_match uuid, p_player uuid, p_team text, p_entry uuid,
                                                 p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    h match_handovers;
    v_refund numeric;
BEGIN
    SELECT * INTO h FROM match_handovers
     WHERE match_request_id = p_match AND team = p_team AND status = 'OPEN'
       AND window_ends_at > p_now
     ORDER BY substitute_id = p_player DESC, seq
     LIMIT 1
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    UPDATE match_handovers SET status = 'REFILLED', settled_at = p_now, refill_entry_id = p_entry
     WHERE id = h.id;
    SELECT sum(f.amount) INTO v_refund
      FROM payments_refund(ARRAY(SELECT id FROM payments WHERE entry_id = h.entry_id
                                                           AND kind = 'PAYMENT'), p_now) f;
    PERFORM notify(ARRAY[h.player_id], 'PLACE_HANDED_OVER',
                   jsonb_build_object('matchRequestId', p_match, 'playerId', p_player,
                                      'refund', v_refund::text), p_now);
END $$;
COMMENT ON FUNCTION match_handover_refill(uuid, uuid, text, uuid, timestamptz) IS
    'A paid join refills an open hand-over of its team: the leaver refunded and told.';

-- The hand-overs of locked match p_match whose window closed unfilled -> LAPSED, each late
-- absence among them charged the LATE_ABSENCE it deferred. Returns how many closed.
CREATE OR REPLACE FUNCTION match_handovers_close(p_match uuid, p_now timestamptz)
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_closed integer;
    v_late uuid[];
BEGIN
    WITH c AS (UPDATE match_handovers SET status = 'LAPSED', settled_at = p_now
                WHERE match_request_id = p_match AND status = 'OPEN' AND window_ends_at <= p_now
               RETURNING player_id, late_penalty)
    SELECT count(*), COALESCE(array_agg(player_id) FILTER (WHERE late_penalty), '{}')
      INTO v_closed, v_late FROM c;
    IF cardinality(v_late) > 0 THEN
        PERFORM reliability_apply(v_late, array_fill(p_match, ARRAY[cardinality(v_late)]),
                                  array_fill('LATE_ABSENCE'::text, ARRAY[cardinality(v_late)]),
                                  p_now);
    END IF;
    RETURN v_closed;
END $$;
COMMENT ON FUNCTION match_handovers_close(uuid, timestamptz) IS
    'Hand-overs of a locked match past their window -> LAPSED, deferred late penalties applied.';

-- After hand-over invitations p_invitations of locked match p_match ended unaccepted
-- (declined or lapsed) and the waiting list had its turn: a place still free and unheld
-- goes to ordinary SUBSTITUTE invitations.
CREATE OR REPLACE FUNCTION match_handover_pass_on(p_match uuid, p_invitations uuid[], p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
    v_min integer;
BEGIN
    SELECT min_reliability INTO v_min FROM match_handovers
     WHERE invitation_id = ANY (p_invitations) AND match_request_id = p_match
     ORDER BY seq DESC LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT * INTO m FROM match_requests WHERE id = p_match;
    IF m.status = 'OPEN' AND m.starts_at > p_now AND match_places_free(m) > 0 THEN
        PERFORM match_invite(p_match, 'SUBSTITUTE', v_min, p_now);
    END IF;
END $$;
COMMENT ON FUNCTION match_handover_pass_on(uuid, uuid[], timestamptz) IS
    'A hand-over nobody took: its free place goes to SUBSTITUTE invitations after the waiting list.';

-- ---- place requests -------------------------------------------------------------------------
-- A competitive PUBLIC match is for players of its level: anyone else asks
-- (place_request_create), and every player currently in the match is told and answers. One
-- reject makes the request REJECTED; a player who rejected may turn it into an approve while
-- it is open, which makes it PENDING again, or APPROVED when nobody else rejects. Once every
-- player approves, the requester is granted a PLACE invitation for a free place of the team
-- asked for, held like an offer and accepted or declined with the invitation routes; with no
-- place free, they go on the waiting list instead. Only the answers of the players currently
-- in the match count: a leave decides its open requests again when the leaving transaction
-- commits (a deferred trigger), after the freed place went to the leaver's substitute or the
-- waiting list, so it never takes a place from them. A request that is not open
-- (place_request_open) reads CLOSED; one request per player and match.

-- The invitation kinds that hold a place while PENDING (offers_a / offers_b count them):
-- the functions of the places and of the lifecycle ask this instead of listing the kinds.
CREATE OR REPLACE FUNCTION invitation_holds_place(p_kind text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN p_kind IN ('OFFER', 'HANDOVER', 'PLACE');
COMMENT ON FUNCTION invitation_holds_place(text) IS
    'OFFER, HANDOVER and PLACE invitations hold their place while PENDING.';

-- Places held for shares not paid in time freed (match_shares_lapse); lapsed offers,
-- hand-overs and granted places of locked match p_match -> EXPIRED, their places offered to
-- the waiting list, then a hand-over's to ordinary invitations; hand-over windows that closed
-- are settled. Every write of the match's places runs this first, and so does the sweeper.
-- Returns how many offers lapsed.
CREATE OR REPLACE FUNCTION match_offers_settle(p_match uuid, p_now timestamptz)
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_lapsed integer;
    v_handovers uuid[];
BEGIN
    -- places held for a share that was not paid in time are free first (92_payments.sql)
    PERFORM match_shares_lapse(p_match, p_now);
    WITH e AS (UPDATE invitations SET status = 'EXPIRED'
                WHERE match_request_id = p_match AND invitation_holds_place(kind)
                  AND status = 'PENDING' AND expires_at <= p_now
               RETURNING id, kind)
    SELECT count(*), array_agg(id) FILTER (WHERE kind = 'HANDOVER')
      INTO v_lapsed, v_handovers FROM e;
    PERFORM match_handovers_close(p_match, p_now);
    IF v_lapsed > 0 THEN
        PERFORM match_offer_places(p_match, p_now);
    END IF;
    IF v_handovers IS NOT NULL THEN
        PERFORM match_handover_pass_on(p_match, v_handovers, p_now);
    END IF;
    RETURN v_lapsed;
END $$;
COMMENT ON FUNCTION match_offers_settle(uuid, timestamptz) IS
    'Lapsed offers of a locked match -> EXPIRED, their places offered on; returns how many lapsed.';

-- The status place request p_request has by the answers of the players currently in its
-- match: REJECTED when one of them rejects, APPROVED when every one approves, else PENDING.
CREATE OR REPLACE FUNCTION place_request_verdict(p_request uuid, p_match uuid) RETURNS text
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    verdict text;
BEGIN
    SELECT CASE WHEN bool_or(NOT a.approve) THEN 'REJECTED'
                WHEN bool_and(a.approve IS NOT NULL) THEN 'APPROVED'
                ELSE 'PENDING' END
      FROM match_players mp
      LEFT JOIN place_request_answers a
             ON a.place_request_id = p_request AND a.player_id = mp.player_id
     WHERE mp.match_request_id = p_match AND mp.left_at IS NULL
      INTO verdict;
    RETURN verdict;
END $$;
COMMENT ON FUNCTION place_request_verdict(uuid, uuid) IS
    'REJECTED, APPROVED or PENDING by the answers of the players now in the match.';

-- Whether place request pr of match m is open at p_now: not approved, the match OPEN or
-- MATCHED and not started, and its player not in it (they may have come in by the link).
CREATE OR REPLACE FUNCTION place_request_open(pr place_requests, m match_requests, p_now timestamptz)
    RETURNS boolean
    LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN pr.status <> 'APPROVED' AND m.status IN ('OPEN', 'MATCHED') AND m.starts_at > p_now
       AND NOT EXISTS (SELECT 1 FROM match_players mp
                        WHERE mp.match_request_id = m.id AND mp.player_id = pr.player_id
                          AND mp.left_at IS NULL);
END $$;
COMMENT ON FUNCTION place_request_open(place_requests, match_requests, timestamptz) IS
    'A place request is open: not approved, its match open or full and not started, its player not in it.';

-- Decides open place request p_request of locked match p_match again by its answers. Turned
-- REJECTED, the requester is told PLACE_REQUEST_REJECTED {matchRequestId, placeRequestId}.
-- Turned APPROVED, the requester is granted a place: a PLACE invitation for a free place no
-- offer holds, in the team asked for (TEAM_A first for ANY), theirs until offer_window
-- passes, leaving the waiting list; with none free (or the match full), a place on the
-- waiting list for that team. Either way they are told PLACE_REQUEST_APPROVED
-- {matchRequestId, placeRequestId, invitationId, team, expiresAt} (the last three null when
-- waiting). Returns the status.
CREATE OR REPLACE FUNCTION place_request_decide(p_request uuid, p_match uuid, p_now timestamptz)
    RETURNS text
    LANGUAGE plpgsql
AS $$
DECLARE
    pr place_requests;
    m match_requests;
    v_verdict text;
    v_team text;
    v_inv invitations;
    v_wait uuid;
BEGIN
    SELECT * INTO pr FROM place_requests WHERE id = p_request FOR UPDATE;
    SELECT * INTO m FROM match_requests WHERE id = p_match;
    v_verdict := place_request_verdict(p_request, p_match);
    IF v_verdict IS NULL OR v_verdict = pr.status OR NOT place_request_open(pr, m, p_now) THEN
        RETURN pr.status;
    END IF;
    IF v_verdict <> 'APPROVED' THEN
        UPDATE place_requests SET status = v_verdict, updated_at = p_now WHERE id = p_request;
        IF v_verdict = 'REJECTED' THEN
            PERFORM notify(ARRAY[pr.player_id], 'PLACE_REQUEST_REJECTED',
                           jsonb_build_object('matchRequestId', p_match,
                                              'placeRequestId', p_request), p_now);
        END IF;
        RETURN v_verdict;
    END IF;
    IF m.status = 'OPEN' THEN
        v_team := CASE WHEN pr.team IN ('TEAM_A', 'ANY')
                            AND m.team_a_count + m.offers_a < m.team_size THEN 'TEAM_A'
                       WHEN pr.team IN ('TEAM_B', 'ANY')
                            AND m.team_b_count + m.offers_b < m.team_size THEN 'TEAM_B' END;
    END IF;
    IF v_team IS NOT NULL THEN
        INSERT INTO invitations (match_request_id, player_id, kind, status, team, expires_at,
                                 sent_at, responded_at)
        SELECT p_match, pr.player_id, 'PLACE', 'PENDING', v_team, p_now + pol.offer_window,
               p_now, NULL
          FROM match_policy pol
        ON CONFLICT (match_request_id, player_id) DO UPDATE
           SET kind = 'PLACE', status = 'PENDING', team = EXCLUDED.team,
               expires_at = EXCLUDED.expires_at, sent_at = EXCLUDED.sent_at, responded_at = NULL
        RETURNING * INTO v_inv;
        UPDATE match_waitlist SET ended_at = p_now, ended_reason = 'OFFERED'
         WHERE match_request_id = p_match AND player_id = pr.player_id AND ended_at IS NULL;
    ELSE
        SELECT id INTO v_wait FROM match_waitlist
         WHERE match_request_id = p_match AND player_id = pr.player_id AND ended_at IS NULL;
        IF NOT FOUND THEN
            INSERT INTO match_waitlist (match_request_id, player_id, team, joined_at)
            VALUES (p_match, pr.player_id, pr.team, p_now)
            RETURNING id INTO v_wait;
        END IF;
    END IF;
    UPDATE place_requests
       SET status = 'APPROVED', invitation_id = v_inv.id, waitlist_id = v_wait,
           updated_at = p_now, decided_at = p_now
     WHERE id = p_request;
    PERFORM notify(ARRAY[pr.player_id], 'PLACE_REQUEST_APPROVED',
                   jsonb_build_object('matchRequestId', p_match, 'placeRequestId', p_request,
                                      'invitationId', v_inv.id, 'team', v_inv.team,
                                      'expiresAt', api_ts(v_inv.expires_at)), p_now);
    RETURN 'APPROVED';
END $$;
COMMENT ON FUNCTION place_request_decide(uuid, uuid, timestamptz) IS
    'Decides an open place request again by its answers: rejected, or approved and granted a place.';

-- PLACE REQUEST: p_player asks for a place (in p_team: TEAM_A, TEAM_B or ANY) in competitive
-- PUBLIC match p_match of another level than theirs, open or full (approved, a full match's
-- requester waits on its list). 404 NOT_FOUND (unknown, or PRIVATE), 409 ALREADY_IN_MATCH,
-- MATCH_STARTED, MATCH_NOT_OPEN (neither OPEN nor MATCHED), JOIN_INSTEAD (friendly, or
-- of the player's level: join it), PLAYER_BUSY (in another match at that time),
-- PLACE_REQUEST_EXISTS (one per player and match), and the club's booking rules. The players
-- in the match are told PLACE_REQUESTED {matchRequestId, placeRequestId, playerId}.
-- Returns the request's id.
CREATE OR REPLACE FUNCTION place_request_create(p_match uuid, p_player uuid, p_team text, p_message text,
                                                p_now timestamptz DEFAULT now())
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
    v_id uuid;
BEGIN
    SELECT * INTO m FROM match_requests WHERE id = p_match FOR UPDATE;
    IF NOT FOUND OR m.visibility = 'PRIVATE' THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    PERFORM match_offers_settle(p_match, p_now);
    IF EXISTS (SELECT 1 FROM match_players WHERE match_request_id = p_match
                  AND player_id = p_player AND left_at IS NULL) THEN
        PERFORM lifecycle_fail(409, 'ALREADY_IN_MATCH', 'You already play in this match.');
    END IF;
    IF m.starts_at <= p_now THEN
        PERFORM lifecycle_fail(409, 'MATCH_STARTED', 'The match has already started.');
    END IF;
    IF m.status NOT IN ('OPEN', 'MATCHED') THEN
        PERFORM lifecycle_fail(409, 'MATCH_NOT_OPEN', 'The match is not open to new players.');
    END IF;
    IF NOT m.competitive OR m.skill_level = match_player_level(p_player) THEN
        PERFORM lifecycle_fail(409, 'JOIN_INSTEAD',
            'This match is open to you: join it instead of asking for a place.');
    END IF;
    IF match_player_busy(m, p_player) THEN
        PERFORM lifecycle_fail(409, 'PLAYER_BUSY', 'You play in another match at that time.');
    END IF;
    IF EXISTS (SELECT 1 FROM place_requests WHERE match_request_id = p_match
                  AND player_id = p_player) THEN
        PERFORM lifecycle_fail(409, 'PLACE_REQUEST_EXISTS',
            'You have already asked for a place in this match.');
    END IF;
    PERFORM booking_rules_check(m.resource_id, p_player, m.starts_at, p_now);
    INSERT INTO place_requests (match_request_id, player_id, team, message, status,
                                created_at, updated_at)
    VALUES (p_match, p_player, p_team, p_message, 'PENDING', p_now, p_now)
    RETURNING id INTO v_id;
    PERFORM notify(match_active_players(p_match), 'PLACE_REQUESTED',
                   jsonb_build_object('matchRequestId', p_match, 'placeRequestId', v_id,
                                      'playerId', p_player), p_now);
    RETURN v_id;
END $$;
COMMENT ON FUNCTION place_request_create(uuid, uuid, text, text, timestamptz) IS
    'PLACE REQUEST: a player of another level asks the players of a competitive match for a place.';

-- APPROVE or REJECT (p_approve) place request p_request by p_player, a player currently in
-- its match. 404 NOT_FOUND (unknown, or the caller not in the match, also when the settling
-- freed their place: a share owed past its window), 409 PLACE_REQUEST_CLOSED
-- (not open: approved already, its player in the match, or the match over, confirmed or
-- started). A repeat changes nothing; an answer may change while the request is open.
-- Returns the request's status.
CREATE OR REPLACE FUNCTION place_request_answer(p_request uuid, p_player uuid, p_approve boolean,
                                                p_now timestamptz DEFAULT now())
    RETURNS text
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
    pr place_requests;
BEGIN
    -- the match first, as every write of its places does
    SELECT mr.* INTO m FROM place_requests q JOIN match_requests mr ON mr.id = q.match_request_id
     WHERE q.id = p_request
       FOR UPDATE OF mr;
    IF NOT FOUND OR NOT EXISTS (SELECT 1 FROM match_players WHERE match_request_id = m.id
                                   AND player_id = p_player AND left_at IS NULL) THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Place request not found.');
    END IF;
    PERFORM match_offers_settle(m.id, p_now);
    -- the settling frees the places of shares owed past their window, the caller's too
    -- (sql/areas/92_payments.sql): then they are no longer in the match
    IF NOT EXISTS (SELECT 1 FROM match_players WHERE match_request_id = m.id
                      AND player_id = p_player AND left_at IS NULL) THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Place request not found.');
    END IF;
    SELECT * INTO pr FROM place_requests WHERE id = p_request FOR UPDATE;
    IF NOT place_request_open(pr, m, p_now) THEN
        PERFORM lifecycle_fail(409, 'PLACE_REQUEST_CLOSED',
            'The place request is decided, its player has joined, or its match is no longer open.');
    END IF;
    INSERT INTO place_request_answers (place_request_id, player_id, approve, answered_at)
    VALUES (p_request, p_player, p_approve, p_now)
    ON CONFLICT (place_request_id, player_id) DO UPDATE
       SET approve = EXCLUDED.approve, answered_at = EXCLUDED.answered_at
     WHERE place_request_answers.approve <> EXCLUDED.approve;
    RETURN place_request_decide(p_request, m.id, p_now);
END $$;
COMMENT ON FUNCTION place_request_answer(uuid, uuid, boolean, timestamptz) IS
    'APPROVE or REJECT a place request, by a player now in its match.';

-- A player who leaves a match stops counting among those who answer its open place
-- requests: when the leaving transaction commits (after the freed place went to the leaver's
-- substitute or the waiting list), each is decided again, at the leave's instant.
CREATE OR REPLACE FUNCTION place_requests_player_left() RETURNS trigger
    LANGUAGE plpgsql
AS $$
DECLARE
    v_request uuid;
BEGIN
    FOR v_request IN
        SELECT id FROM place_requests
         WHERE match_request_id = NEW.match_request_id AND status IN ('PENDING', 'REJECTED')
         ORDER BY created_at, id
    LOOP
        PERFORM place_request_decide(v_request, NEW.match_request_id, NEW.left_at);
    END LOOP;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION place_requests_player_left() IS
    'Deferred trigger: a leave decides the open place requests of its match again.';

DROP TRIGGER IF EXISTS match_players_place_requests ON match_players;
CREATE CONSTRAINT TRIGGER match_players_place_requests AFTER UPDATE OF left_at ON match_players
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.left_at IS NULL AND NEW.left_at IS NOT NULL)
    EXECUTE FUNCTION place_requests_player_left();

-- WAITLIST: p_player joins the waiting list of MATCHED match p_match for p_team (TEAM_A,
-- TEAM_B or ANY), by the rules of joining from the feed. 404 NOT_FOUND (no such match, or a
-- PRIVATE one to anyone not in it), 409 ALREADY_IN_MATCH, MATCH_STARTED, MATCH_NOT_FULL (not
-- MATCHED: join it instead, or it is over), ALREADY_WAITING, LEVEL_MISMATCH (a competitive
-- match of another level than the player's: ask for a place instead). An approved place
-- request puts its player on the list without these checks: the players accepted them.
-- Returns the entry's id.
CREATE OR REPLACE FUNCTION match_waitlist_join(p_match uuid, p_player uuid, p_team text,
                                               p_now timestamptz DEFAULT now())
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
    v_id uuid;
BEGIN
    SELECT * INTO m FROM match_requests WHERE id = p_match FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    PERFORM match_offers_settle(p_match, p_now);
    SELECT * INTO m FROM match_requests WHERE id = p_match;
    IF EXISTS (SELECT 1 FROM match_players WHERE match_request_id = p_match
                  AND player_id = p_player AND left_at IS NULL) THEN
        PERFORM lifecycle_fail(409, 'ALREADY_IN_MATCH', 'You already play in this match.');
    END IF;
    IF m.visibility = 'PRIVATE' THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    IF m.starts_at <= p_now THEN
        PERFORM lifecycle_fail(409, 'MATCH_STARTED', 'The match has already started.');
    END IF;
    IF m.status <> 'MATCHED' THEN
        PERFORM lifecycle_fail(409, 'MATCH_NOT_FULL',
            'Only a full match has a waiting list; join an open match instead.');
    END IF;
    IF EXISTS (SELECT 1 FROM match_waitlist WHERE match_request_id = p_match
                  AND player_id = p_player AND ended_at IS NULL) THEN
        PERFORM lifecycle_fail(409, 'ALREADY_WAITING', 'You are already on this waiting list.');
    END IF;
    IF m.competitive AND m.skill_level IS DISTINCT FROM match_player_level(p_player) THEN
        PERFORM lifecycle_fail(409, 'LEVEL_MISMATCH',
            format('This competitive match is for %s players; ask for a place instead.',
                   m.skill_level));
    END IF;
    INSERT INTO match_waitlist (match_request_id, player_id, team, joined_at)
    VALUES (p_match, p_player, p_team, p_now)
    RETURNING id INTO v_id;
    RETURN v_id;
END $$;
COMMENT ON FUNCTION match_waitlist_join(uuid, uuid, text, timestamptz) IS
    'WAITLIST: a player queues for a place in a full match.';
