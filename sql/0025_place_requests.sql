-- 0025_place_requests: a player of another level asks for a place, and the match decides.
--
-- A competitive PUBLIC match is for players of its level (0024): anyone else who wants to
-- play in it asks (POST /api/match/requests/{id}/place-requests), and every player now in
-- the match is told and answers approve or reject. One reject makes the request REJECTED
-- and tells the requester; a player who rejected may turn it into an approve while the
-- request is open (the match open or full and not started), which makes it PENDING again,
-- or APPROVED when nobody else rejects. When every player now in the match has approved, the
-- requester is granted a place: an invitation of kind PLACE for a free place of the team
-- asked for (either, when ANY), theirs alone until it expires (match_policy.offer_window) and
-- held like an offer (0022: the same counters and CHECK), accepted or declined with the
-- invitation routes; declined or lapsed, the place passes to the waiting list as an
-- offer's does. When no place is free by then (the match filled meanwhile), the requester
-- goes on the waiting list instead, where the next freed place comes to them in turn.
--
-- Only the answers of the players now in the match count: a player who leaves no longer
-- counts, one who joins must answer too. A leave can therefore settle a request (the last
-- player who had not answered, or the only one who rejected, leaves): the request is
-- decided again when the leaving transaction commits (a deferred trigger), after the freed
-- place went to the leaver's substitute or the waiting list, so it never takes a place from
-- them.
--
-- A request is open while it is not approved, its match is OPEN or MATCHED and has not
-- started, and its player does not play in it: one who took a place by the link meanwhile
-- is not granted another (place_request_open). A request that is not open reads CLOSED.
--
-- One request per player and match: a rejected player does not ask again and again.

-- The invitation kinds that hold a place while PENDING (offers_a / offers_b count them):
-- the lifecycle functions below ask this instead of listing the kinds.
CREATE FUNCTION invitation_holds_place(p_kind text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN p_kind IN ('OFFER', 'HANDOVER', 'PLACE');
COMMENT ON FUNCTION invitation_holds_place(text) IS
    'OFFER, HANDOVER and PLACE invitations hold their place while PENDING.';

ALTER TABLE invitations DROP CONSTRAINT invitations_kind_check,
    DROP CONSTRAINT invitations_offer_has_team_and_expiry;
ALTER TABLE invitations
    ADD CONSTRAINT invitations_kind_check
        CHECK (kind IN ('INVITE', 'SUBSTITUTE', 'OFFER', 'HANDOVER', 'PLACE')),
    ADD CONSTRAINT invitations_offer_has_team_and_expiry
        CHECK ((kind IN ('OFFER', 'HANDOVER', 'PLACE'))
               = (team IS NOT NULL AND expires_at IS NOT NULL));
COMMENT ON COLUMN invitations.kind IS
    'INVITE (on payment), SUBSTITUTE (after an absence), OFFER (a freed place, to the waiting list), HANDOVER (a freed place, to the leaver''s substitute) or PLACE (a place granted to an approved place request).';
DROP INDEX invitations_open_offers_idx;
CREATE INDEX invitations_open_offers_idx ON invitations (expires_at)
    WHERE kind IN ('OFFER', 'HANDOVER', 'PLACE') AND status = 'PENDING';

-- (0023, restated) Keeps offers_a / offers_b: every invitation that holds a place counts.
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

-- (0023, restated) Lapsed offers, hand-overs and granted places of locked match p_match ->
-- EXPIRED, their places offered to the waiting list, then a hand-over's to ordinary
-- invitations; hand-over windows that closed are settled. Returns how many lapsed.
CREATE OR REPLACE FUNCTION match_offers_settle(p_match uuid, p_now timestamptz)
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_lapsed integer;
    v_handovers uuid[];
BEGIN
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

-- (0023, restated) Sweeper rule: the matches with lapsed offers, hand-overs or granted
-- places, or hand-over windows that closed, settled (match_offers_settle). Returns how many
-- lapsed. (The kinds are spelled out as invitations_open_offers_idx's predicate has them.)
CREATE OR REPLACE FUNCTION sweep_offers(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_match uuid;
    v_lapsed integer := 0;
BEGIN
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
        v_lapsed := v_lapsed + match_offers_settle(v_match, p_now);
    END LOOP;
    RETURN v_lapsed;
END $$;

-- (0023, restated) JOIN: a granted place is its player's own, as an offer or a hand-over is.
CREATE OR REPLACE FUNCTION match_join_locked(m match_requests, p_player uuid, p_team text,
                                             p_invitation uuid, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_accepted integer;
    v_entry uuid;
    v_offer invitations;
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
    INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
                          entry_id, created_at, updated_at)
    VALUES (m.id, p_player, 'PAYMENT', m.price_per_player, m.currency, 'PAID', v_entry,
            p_now, p_now);
    PERFORM match_handover_refill(m.id, p_player, p_team, v_entry, p_now);
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


-- (0023, restated) The invitation object says PLACE for a granted place.
CREATE OR REPLACE FUNCTION json_invitation(i invitations) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'id', i.id,
        'matchRequestId', i.match_request_id,
        'kind', CASE WHEN invitation_holds_place(i.kind) THEN i.kind ELSE 'INVITATION' END,
        'status', CASE WHEN i.status = 'PENDING' AND i.expires_at <= now() THEN 'EXPIRED'
                       ELSE i.status END,
        'team', i.team,
        'expiresAt', api_ts(i.expires_at),
        'sentAt', api_ts(i.sent_at),
        'respondedAt', api_ts(i.responded_at),
        'bookingDate', m.booking_date,
        'startTime', api_time(m.start_time),
        'endTime', api_time(m.end_time),
        'format', m.format,
        'skillLevel', m.skill_level,
        'matchStatus', m.status,
        'availableSlots', match_places_free(m),
        'pricePerPlayer', m.price_per_player,
        'currency', m.currency,
        'customMessage', m.custom_message,
        'resourceName', r.name,
        'venueName', v.name,
        'venueCity', v.city)
      FROM match_requests m
      JOIN resources r ON r.id = m.resource_id
      JOIN venues v ON v.id = r.venue_id
     WHERE m.id = i.match_request_id;
END;

-- ---- place requests -------------------------------------------------------------------

CREATE TABLE place_requests (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    match_request_id uuid NOT NULL REFERENCES match_requests(id),
    player_id        uuid NOT NULL REFERENCES users(id),
    team             text NOT NULL CONSTRAINT place_requests_team_check
                     CHECK (team IN ('TEAM_A', 'TEAM_B', 'ANY')),
    message          text CONSTRAINT place_requests_message_check
                     CHECK (char_length(message) <= 500),
    status           text NOT NULL CONSTRAINT place_requests_status_check
                     CHECK (status IN ('PENDING', 'REJECTED', 'APPROVED')),
    invitation_id    uuid REFERENCES invitations(id),
    waitlist_id      uuid REFERENCES match_waitlist(id),
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    decided_at       timestamptz,
    CONSTRAINT place_requests_one_per_player UNIQUE (match_request_id, player_id),
    CONSTRAINT place_requests_granted
        CHECK ((status = 'APPROVED') = (decided_at IS NOT NULL)
               AND (status = 'APPROVED') = (invitation_id IS NOT NULL OR waitlist_id IS NOT NULL))
);
CREATE INDEX place_requests_player_idx ON place_requests (player_id, created_at, id);
CREATE INDEX place_requests_open_idx ON place_requests (match_request_id)
    WHERE status IN ('PENDING', 'REJECTED');
COMMENT ON TABLE place_requests IS
    'A player asking for a place in a competitive match of another level; every player in the match answers.';
COMMENT ON COLUMN place_requests.team IS 'The team asked for: TEAM_A, TEAM_B or ANY.';
COMMENT ON COLUMN place_requests.message IS 'The requester''s words to the players (up to 500 characters).';
COMMENT ON COLUMN place_requests.status IS
    'PENDING (answers awaited), REJECTED (a player now in the match rejects it), APPROVED (every one approved: granted).';
COMMENT ON COLUMN place_requests.invitation_id IS 'The PLACE invitation granted, when a place was free.';
COMMENT ON COLUMN place_requests.waitlist_id IS 'The waiting-list entry made instead, when none was.';
COMMENT ON COLUMN place_requests.decided_at IS 'When it was approved (final).';

CREATE TABLE place_request_answers (
    place_request_id uuid NOT NULL REFERENCES place_requests(id),
    player_id        uuid NOT NULL REFERENCES users(id),
    approve          boolean NOT NULL,
    answered_at      timestamptz NOT NULL,
    PRIMARY KEY (place_request_id, player_id)
);
COMMENT ON TABLE place_request_answers IS
    'Each player''s latest answer to a place request; only the players now in the match count.';

-- The status place request p_request has by the answers of the players now in its match:
-- REJECTED when one of them rejects, APPROVED when every one approves, else PENDING.
CREATE FUNCTION place_request_verdict(p_request uuid, p_match uuid) RETURNS text
    LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN bool_or(NOT a.approve) THEN 'REJECTED'
                WHEN bool_and(a.approve IS NOT NULL) THEN 'APPROVED'
                ELSE 'PENDING' END
      FROM match_players mp
      LEFT JOIN place_request_answers a
             ON a.place_request_id = p_request AND a.player_id = mp.player_id
     WHERE mp.match_request_id = p_match AND mp.left_at IS NULL;
$$;
COMMENT ON FUNCTION place_request_verdict(uuid, uuid) IS
    'REJECTED, APPROVED or PENDING by the answers of the players now in the match.';

-- Whether place request pr of match m is open at p_now: not approved, the match OPEN or
-- MATCHED and not started, and its player not in it (they may have come in by the link).
CREATE FUNCTION place_request_open(pr place_requests, m match_requests, p_now timestamptz)
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
CREATE FUNCTION place_request_decide(p_request uuid, p_match uuid, p_now timestamptz)
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
-- now in the match are told PLACE_REQUESTED {matchRequestId, placeRequestId, playerId}.
-- Returns the request's id.
CREATE FUNCTION place_request_create(p_match uuid, p_player uuid, p_team text, p_message text,
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

-- APPROVE or REJECT (p_approve) place request p_request by p_player, a player now in its
-- match. 404 NOT_FOUND (unknown, or the caller not in the match), 409 PLACE_REQUEST_CLOSED
-- (not open: approved already, its player in the match, or the match over, confirmed or
-- started). A repeat changes nothing; an answer may change while the request is open.
-- Returns the request's status.
CREATE FUNCTION place_request_answer(p_request uuid, p_player uuid, p_approve boolean,
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

-- A player who leaves a match no longer counts among those who answer its open place
-- requests: when the leaving transaction commits (after the freed place went to the leaver's
-- substitute or the waiting list), each is decided again, at the leave's instant.
CREATE FUNCTION place_requests_player_left() RETURNS trigger
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
CREATE CONSTRAINT TRIGGER match_players_place_requests AFTER UPDATE OF left_at ON match_players
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.left_at IS NULL AND NEW.left_at IS NOT NULL)
    EXECUTE FUNCTION place_requests_player_left();

-- A place request as its requester and the match's players see it: the requester's
-- effective level and rating, the answers of the players now in the match and who has yet
-- to answer while it is open, and the match (without its link token). A request neither
-- approved nor open (place_request_open) shows CLOSED.
CREATE FUNCTION json_place_request(pr place_requests) RETURNS json
    LANGUAGE sql STABLE
AS $$
    SELECT json_build_object(
        'id', pr.id,
        'matchRequestId', pr.match_request_id,
        'playerId', pr.player_id,
        'displayName', (SELECT display_name FROM players WHERE user_id = pr.player_id),
        'effectiveSkillLevel', match_player_level(pr.player_id),
        'rating', (SELECT round(r.rating::numeric, 2) FROM player_rating(pr.player_id, now()) r),
        'team', pr.team,
        'message', pr.message,
        'status', CASE WHEN pr.status <> 'APPROVED' AND NOT place_request_open(pr, m, now())
                       THEN 'CLOSED' ELSE pr.status END,
        'answers', COALESCE((SELECT json_agg(json_build_object(
                                        'playerId', mp.player_id,
                                        'answer', CASE WHEN a.approve THEN 'APPROVE'
                                                       ELSE 'REJECT' END,
                                        'answeredAt', api_ts(a.answered_at))
                                    ORDER BY a.answered_at, mp.player_id)
                               FROM match_players mp
                               JOIN place_request_answers a
                                 ON a.place_request_id = pr.id AND a.player_id = mp.player_id
                              WHERE mp.match_request_id = m.id AND mp.left_at IS NULL), '[]'),
        'awaiting', COALESCE((SELECT json_agg(mp.player_id ORDER BY mp.joined_at, mp.player_id)
                                FROM match_players mp
                               WHERE mp.match_request_id = m.id AND mp.left_at IS NULL
                                 AND place_request_open(pr, m, now())
                                 AND NOT EXISTS (SELECT 1 FROM place_request_answers a
                                                  WHERE a.place_request_id = pr.id
                                                    AND a.player_id = mp.player_id)), '[]'),
        'invitationId', pr.invitation_id,
        'waitlisted', pr.waitlist_id IS NOT NULL,
        'createdAt', api_ts(pr.created_at),
        'updatedAt', api_ts(pr.updated_at),
        'match', json_match_request(m, false))
      FROM match_requests m
     WHERE m.id = pr.match_request_id;
$$;
COMMENT ON FUNCTION json_place_request(place_requests) IS
    'Place request object: the requester, the answers, who has yet to answer, the match.';
