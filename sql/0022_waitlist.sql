-- 0022_waitlist: a fair waiting list for full matches, with exclusive timed offers.
--
-- A player joins the waiting list of a MATCHED match for one team or for either. When a place
-- frees (a leave or an absence), the first player on the list who is still free to play (not
-- banned, not in another match at that time, not in this one) gets an OFFER: an invitation
-- for that team's place that only they can take until it expires (match_policy.offer_window,
-- 15 minutes). Accepting it in time joins and pays as any join does; declining it or letting
-- it lapse passes the place to the next on the list; with nobody left, the place is open to
-- anyone again. A player leaves the list when offered a place (taken or not).
--
-- The guard: match_requests counts the open offers of each team (offers_a, offers_b, kept by
-- a trigger on invitations), and a CHECK keeps players plus open offers within the team's
-- size. So two open offers for one place, or a place both offered and taken (by the link or
-- by an invitation), cannot be written, whatever the code does.
--
-- Lapsed offers are passed on by every write that touches the match (a join, an accept or a
-- decline, a leave, an absence, the waiting list itself: match_offers_settle first) and by the
-- sweeper's rule for them, so the list moves with or without cron; reads show a lapsed offer
-- as EXPIRED.

ALTER TABLE match_policy ADD COLUMN offer_window interval NOT NULL DEFAULT '15 minutes'
    CONSTRAINT match_policy_offer_window_positive CHECK (offer_window > interval '0');
COMMENT ON COLUMN match_policy.offer_window IS
    'How long an offer of a freed place to the next player on the waiting list stays open.';

ALTER TABLE invitations DROP CONSTRAINT invitations_kind_check;
ALTER TABLE invitations
    ADD CONSTRAINT invitations_kind_check CHECK (kind IN ('INVITE', 'SUBSTITUTE', 'OFFER')),
    ADD COLUMN team text CONSTRAINT invitations_team_check CHECK (team IN ('TEAM_A', 'TEAM_B')),
    ADD COLUMN expires_at timestamptz,
    ADD CONSTRAINT invitations_offer_has_team_and_expiry
        CHECK ((kind = 'OFFER') = (team IS NOT NULL AND expires_at IS NOT NULL));
COMMENT ON COLUMN invitations.kind IS
    'INVITE (on payment), SUBSTITUTE (after an absence) or OFFER (a freed place, to the waiting list).';
COMMENT ON COLUMN invitations.team IS 'An offer''s team: the team of the place it holds.';
COMMENT ON COLUMN invitations.expires_at IS 'An offer''s end: after it the place passes on.';
CREATE INDEX invitations_open_offers_idx ON invitations (expires_at)
    WHERE kind = 'OFFER' AND status = 'PENDING';

-- json_match_request's body reads the row type: it is restated below, with the new fields
DROP FUNCTION json_match_request(match_requests);
ALTER TABLE match_requests
    ADD COLUMN offers_a integer NOT NULL DEFAULT 0,
    ADD COLUMN offers_b integer NOT NULL DEFAULT 0,
    -- (with no open offer, match_requests_team_capacity alone speaks for a full team)
    ADD CONSTRAINT match_requests_offered_places
        CHECK (offers_a >= 0 AND offers_b >= 0
               AND (offers_a = 0 OR team_a_count + offers_a <= team_size)
               AND (offers_b = 0 OR team_b_count + offers_b <= team_size));
COMMENT ON COLUMN match_requests.offers_a IS 'Open offers of a TEAM_A place, kept by trigger from invitations.';
COMMENT ON COLUMN match_requests.offers_b IS 'Open offers of a TEAM_B place, kept by trigger from invitations.';

-- The places of a match that no player takes and no open offer holds: the availableSlots of
-- the match and invitation objects. (A body in quotes: it depends on no column, so the
-- table may gain more.)
CREATE FUNCTION match_places_free(m match_requests) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT 2 * m.team_size - m.team_a_count - m.team_b_count - m.offers_a - m.offers_b;
$$;
COMMENT ON FUNCTION match_places_free(match_requests) IS
    'Places of a match no player takes and no open offer holds.';

-- Keeps offers_a / offers_b: an OFFER counts while PENDING. An offer becomes PENDING only by
-- insert (or by an update that makes a row an offer), and stops by update or delete.
CREATE FUNCTION invitations_count_offers() RETURNS trigger
    LANGUAGE plpgsql
AS $$
DECLARE
    v_old boolean := TG_OP <> 'INSERT' AND OLD.kind = 'OFFER' AND OLD.status = 'PENDING';
    v_new boolean := TG_OP <> 'DELETE' AND NEW.kind = 'OFFER' AND NEW.status = 'PENDING';
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
CREATE TRIGGER invitations_count_offers AFTER INSERT OR UPDATE OF kind, status, team OR DELETE
    ON invitations FOR EACH ROW EXECUTE FUNCTION invitations_count_offers();

CREATE TABLE match_waitlist (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    match_request_id uuid NOT NULL REFERENCES match_requests(id),
    player_id        uuid NOT NULL REFERENCES users(id),
    team             text NOT NULL CONSTRAINT match_waitlist_team_check
                     CHECK (team IN ('TEAM_A', 'TEAM_B', 'ANY')),
    joined_at        timestamptz NOT NULL DEFAULT now(),
    ended_at         timestamptz,
    ended_reason     text CONSTRAINT match_waitlist_ended_reason_check
                     CHECK (ended_reason IN ('LEFT', 'OFFERED', 'JOINED', 'MATCH_ENDED')),
    CONSTRAINT match_waitlist_ended_both CHECK ((ended_at IS NULL) = (ended_reason IS NULL))
);
CREATE UNIQUE INDEX match_waitlist_one_per_player ON match_waitlist (match_request_id, player_id)
    WHERE ended_at IS NULL;
CREATE INDEX match_waitlist_order_idx ON match_waitlist (match_request_id, joined_at, id)
    WHERE ended_at IS NULL;
CREATE INDEX match_waitlist_player_idx ON match_waitlist (player_id);
COMMENT ON TABLE match_waitlist IS
    'Players waiting for a place in a full match, first come first offered; an entry ends when left, offered or the match ends.';
COMMENT ON COLUMN match_waitlist.team IS 'TEAM_A, TEAM_B, or ANY: which team''s place the player takes.';
COMMENT ON COLUMN match_waitlist.ended_reason IS
    'LEFT (the player), OFFERED (a place was offered), JOINED (joined another way), MATCH_ENDED.';

-- Whether p_player is free to be offered a place in match m at p_now: not banned, not in it,
-- and in no other live match overlapping it.
CREATE FUNCTION offer_candidate_free(m match_requests, p_player uuid, p_now timestamptz)
    RETURNS boolean
    LANGUAGE sql STABLE
AS $$
    SELECT NOT EXISTS (SELECT 1 FROM players p
                        WHERE p.user_id = p_player AND p.banned_until > p_now)
       AND NOT EXISTS (SELECT 1 FROM match_players mp
                         JOIN match_requests o ON o.id = mp.match_request_id
                        WHERE mp.player_id = p_player AND mp.left_at IS NULL
                          AND o.status IN ('PENDING_PAYMENT', 'OPEN', 'MATCHED', 'CONFIRMED')
                          AND (o.id = m.id OR (o.starts_at < m.ends_at AND m.starts_at < o.ends_at)));
$$;
COMMENT ON FUNCTION offer_candidate_free(match_requests, uuid, timestamptz) IS
    'A player may be offered a place in a match: not banned, not in it, no overlapping match.';

-- Offers the free places of locked match p_match that no offer holds yet to the first free
-- players on its waiting list, a place per player, in list order; each offered player leaves
-- the list and is told PLACE_OFFERED {matchRequestId, invitationId, team, expiresAt}. Only
-- for an OPEN match that has not started. Returns how many offers were made.
CREATE FUNCTION match_offer_places(p_match uuid, p_now timestamptz)
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

-- Ends the lapsed offers of locked match p_match (EXPIRED) and offers their places to the
-- next on the list. Every write that touches the match's places runs this first.
CREATE FUNCTION match_offers_settle(p_match uuid, p_now timestamptz)
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_lapsed integer;
BEGIN
    WITH e AS (UPDATE invitations SET status = 'EXPIRED'
                WHERE match_request_id = p_match AND kind = 'OFFER' AND status = 'PENDING'
                  AND expires_at <= p_now
               RETURNING 1)
    SELECT count(*) INTO v_lapsed FROM e;
    IF v_lapsed > 0 THEN
        PERFORM match_offer_places(p_match, p_now);
    END IF;
    RETURN v_lapsed;
END $$;
COMMENT ON FUNCTION match_offers_settle(uuid, timestamptz) IS
    'Lapsed offers of a locked match -> EXPIRED, their places offered on; returns how many lapsed.';

-- WAITLIST: p_player joins the waiting list of MATCHED match p_match for p_team (TEAM_A,
-- TEAM_B or ANY). 404 NOT_FOUND (no such match), 409 MATCH_NOT_FULL (not MATCHED: join it
-- instead, or it is over), MATCH_STARTED, ALREADY_IN_MATCH, ALREADY_WAITING. Returns the
-- entry's id.
CREATE FUNCTION match_waitlist_join(p_match uuid, p_player uuid, p_team text,
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
    INSERT INTO match_waitlist (match_request_id, player_id, team, joined_at)
    VALUES (p_match, p_player, p_team, p_now)
    RETURNING id INTO v_id;
    RETURN v_id;
END $$;
COMMENT ON FUNCTION match_waitlist_join(uuid, uuid, text, timestamptz) IS
    'WAITLIST: a player queues for a place in a full match.';

-- UNWAITLIST: p_player leaves the waiting list of p_match. 404 NOT_FOUND when not on it.
CREATE FUNCTION match_waitlist_leave(p_match uuid, p_player uuid, p_now timestamptz DEFAULT now())
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

-- A waiting-list entry as its player sees it: its position among those still waiting.
CREATE FUNCTION json_waitlist_entry(p_entry uuid) RETURNS json
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT json_build_object(
        'matchRequestId', w.match_request_id,
        'playerId', w.player_id,
        'team', w.team,
        'position', (SELECT count(*) FROM match_waitlist o
                      WHERE o.match_request_id = w.match_request_id AND o.ended_at IS NULL
                        AND (o.joined_at, o.id) <= (w.joined_at, w.id)),
        'joinedAt', api_ts(w.joined_at))
      FROM match_waitlist w WHERE w.id = p_entry;
END;
COMMENT ON FUNCTION json_waitlist_entry(uuid) IS 'Waiting-list entry object with its position.';

-- ---- the lifecycle functions that free, take or end places, restated with offers --------

-- JOIN (0010, restated): lapsed offers are passed on first; a place an open offer holds is
-- not free, but to the offer's own player, who takes it by accepting the offer in its team
-- (409 OFFER_FOR_OTHER_TEAM otherwise); a player who joins leaves the waiting list.
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
    -- the player's own open offer, however they came in (the link takes it too)
    SELECT * INTO v_offer FROM invitations
     WHERE match_request_id = m.id AND player_id = p_player AND kind = 'OFFER'
       AND status = 'PENDING';
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

-- DECLINE (0010, restated): a declined offer passes its place to the next on the list.
CREATE OR REPLACE FUNCTION match_decline_invitation(p_invitation uuid, p_player uuid,
                                                    p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_match uuid;
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
     WHERE id = p_invitation AND status = 'PENDING';
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE',
            'The invitation was already answered or has expired.');
    END IF;
    PERFORM match_offer_places(v_match, p_now);
END $$;

-- The place p_player leaves in locked match m (LEAVE or ABSENCE, 0010, restated): lapsed
-- offers passed on first, then the freed place offered to the waiting list.
CREATE OR REPLACE FUNCTION match_withdraw(m match_requests, p_player uuid, p_event text, p_now timestamptz)
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    v_entry uuid;
BEGIN
    PERFORM match_offers_settle(m.id, p_now);
    UPDATE match_players SET left_at = p_now, left_reason = CASE p_event WHEN 'LEAVE' THEN 'LEFT' ELSE 'ABSENT' END
     WHERE match_request_id = m.id AND player_id = p_player AND left_at IS NULL AND role = 'PLAYER'
    RETURNING id INTO v_entry;
    PERFORM match_move(ARRAY[m.id], p_event, p_now);
    PERFORM notify(match_active_players(m.id), CASE p_event WHEN 'LEAVE' THEN 'PLAYER_LEFT' ELSE 'PLAYER_ABSENT' END,
                   jsonb_build_object('matchRequestId', m.id, 'playerId', p_player), p_now);
    PERFORM match_offer_places(m.id, p_now);
    RETURN v_entry;
END $$;

-- A match that ends (0010's match_end: cancelled, lapsed unpaid, not filled) ends its list.
CREATE FUNCTION match_waitlist_end() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE match_waitlist SET ended_at = NEW.updated_at, ended_reason = 'MATCH_ENDED'
     WHERE match_request_id = NEW.id AND ended_at IS NULL;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION match_waitlist_end() IS 'Row trigger: a match that is over or cancelled has no waiting list.';
CREATE TRIGGER match_requests_waitlist_end AFTER UPDATE OF status ON match_requests
    FOR EACH ROW WHEN (NEW.status IN ('CANCELLED', 'COMPLETED', 'CONFIRMED')
                       AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION match_waitlist_end();

-- Sweeper rule: the lapsed offers of a batch of matches, passed on (match_offers_settle).
-- Returns how many offers lapsed.
CREATE FUNCTION sweep_offers(p_limit integer, p_now timestamptz DEFAULT now())
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
                         WHERE i.kind = 'OFFER' AND i.status = 'PENDING' AND i.expires_at <= p_now)
         ORDER BY m.id LIMIT p_limit
           FOR UPDATE SKIP LOCKED
    LOOP
        v_lapsed := v_lapsed + match_offers_settle(v_match, p_now);
    END LOOP;
    RETURN v_lapsed;
END $$;
COMMENT ON FUNCTION sweep_offers(integer, timestamptz) IS
    'Sweeper rule: lapsed offers of a batch of matches expired and passed on; returns how many lapsed.';

-- The match object (0003) gains waitlistLength, and availableSlots leaves out the places
-- open offers hold.
CREATE FUNCTION json_match_request(m match_requests) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'id', m.id,
        'resourceId', m.resource_id,
        'bookingDate', m.booking_date,
        'startTime', api_time(m.start_time),
        'endTime', api_time(m.end_time),
        'format', m.format,
        'skillLevel', m.skill_level,
        'status', m.status,
        'invitationToken', m.invitation_token,
        'availableSlots', match_places_free(m),
        'pricePerPlayer', m.price_per_player,
        'currency', m.currency,
        'courtPrice', m.court_price,
        'organizerId', m.organizer_id,
        'customMessage', m.custom_message,
        'expiresAt', api_ts(m.expires_at),
        'createdAt', api_ts(m.created_at),
        'players', COALESCE((SELECT json_agg(json_build_object(
                                'playerId', p.player_id,
                                'team', p.team,
                                'role', p.role,
                                'joinedAt', api_ts(p.joined_at),
                                'checkedIn', p.checked_in_at IS NOT NULL,
                                'checkedInAt', api_ts(p.checked_in_at)) ORDER BY p.joined_at, p.player_id)
                              FROM match_players p
                             WHERE p.match_request_id = m.id AND p.left_at IS NULL), '[]'),
        'waitlistLength', (SELECT count(*) FROM match_waitlist w
                            WHERE w.match_request_id = m.id AND w.ended_at IS NULL));
END;
COMMENT ON FUNCTION json_match_request(match_requests) IS 'Match request object with its current players.';

-- The invitation object (0003) gains kind (INVITATION, OFFER; HANDOVER to come), team and
-- expiresAt (an offer's; null otherwise), and shows a lapsed offer as EXPIRED.
CREATE OR REPLACE FUNCTION json_invitation(i invitations) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'id', i.id,
        'matchRequestId', i.match_request_id,
        'kind', CASE i.kind WHEN 'OFFER' THEN 'OFFER' ELSE 'INVITATION' END,
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

-- The match of invitation p_invitation (or of the shareable token p_token), locked, with its
-- lapsed offers passed on: what the API runs, in a transaction of its own, after a join it
-- refused because of a lapsed offer (the player's own, INVALID_STATE, or one still holding
-- the place, TEAM_FULL): the refusal rolls back what the join had settled. Returns how many
-- offers lapsed.
CREATE FUNCTION match_offers_settle_of(p_invitation uuid, p_token uuid,
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
