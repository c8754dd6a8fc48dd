-- 0023_handover: a player who cannot come hands their place to someone else.
--
-- A leave or an absence may name a substitute (POST .../absence or DELETE .../leave with
-- {"substitutePlayerId"}). The substitute gets a HANDOVER invitation for the freed place, in
-- the leaver's team: theirs alone until it expires (match_policy.offer_window, as an offer),
-- counted with the open offers of that team, so the same CHECK keeps it exclusive. Declined or
-- lapsed, the place goes to the waiting list (0022), and when nobody there takes it, ordinary
-- SUBSTITUTE invitations go out.
--
-- The hand-over itself (match_handovers) lasts until match_policy.handover_notice before the
-- start (2 hours). Whoever takes and pays a place of that team in that time (the substitute,
-- an offer from the list, an invitation, the link, the leaver again) refills it: the leaver's
-- payment is refunded in full (the refund names it) and a late absence costs no reliability.
-- That penalty is therefore deferred while the hand-over runs: it is applied when the window
-- closes unfilled, by the next write of the match or by the sweeper. An absence reported after
-- the window opens no hand-over: the substitute is still invited, the penalty is immediate.
--
-- A leave is refunded when it happens (0010), so its hand-over refunds nothing more: it only
-- gives the place to the substitute first.

ALTER TABLE match_policy ADD COLUMN handover_notice interval NOT NULL DEFAULT '2 hours'
    CONSTRAINT match_policy_handover_notice_check CHECK (handover_notice >= interval '0');
COMMENT ON COLUMN match_policy.handover_notice IS
    'A hand-over refills the leaver''s place (refund, no late penalty) until this long before the start.';

ALTER TABLE invitations DROP CONSTRAINT invitations_kind_check,
    DROP CONSTRAINT invitations_offer_has_team_and_expiry;
ALTER TABLE invitations
    ADD CONSTRAINT invitations_kind_check
        CHECK (kind IN ('INVITE', 'SUBSTITUTE', 'OFFER', 'HANDOVER')),
    ADD CONSTRAINT invitations_offer_has_team_and_expiry
        CHECK ((kind IN ('OFFER', 'HANDOVER')) = (team IS NOT NULL AND expires_at IS NOT NULL));
COMMENT ON COLUMN invitations.kind IS
    'INVITE (on payment), SUBSTITUTE (after an absence), OFFER (a freed place, to the waiting list) or HANDOVER (a freed place, to the leaver''s substitute).';
COMMENT ON COLUMN invitations.team IS 'An offer''s or hand-over''s team: the team of the place it holds.';
COMMENT ON COLUMN invitations.expires_at IS 'An offer''s or hand-over''s end: after it the place passes on.';
DROP INDEX invitations_open_offers_idx;
CREATE INDEX invitations_open_offers_idx ON invitations (expires_at)
    WHERE kind IN ('OFFER', 'HANDOVER') AND status = 'PENDING';

-- Keeps offers_a / offers_b (0022, restated): a pending hand-over holds its place as an offer.
CREATE OR REPLACE FUNCTION invitations_count_offers() RETURNS trigger
    LANGUAGE plpgsql
AS $$
DECLARE
    v_old boolean := TG_OP <> 'INSERT' AND OLD.kind IN ('OFFER', 'HANDOVER')
                     AND OLD.status = 'PENDING';
    v_new boolean := TG_OP <> 'DELETE' AND NEW.kind IN ('OFFER', 'HANDOVER')
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

CREATE TABLE match_handovers (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq              bigint GENERATED ALWAYS AS IDENTITY,
    match_request_id uuid NOT NULL REFERENCES match_requests(id),
    player_id        uuid NOT NULL REFERENCES users(id),
    entry_id         uuid NOT NULL CONSTRAINT match_handovers_one_per_entry UNIQUE
                     REFERENCES match_players(id),
    team             text NOT NULL CONSTRAINT match_handovers_team_check
                     CHECK (team IN ('TEAM_A', 'TEAM_B')),
    substitute_id    uuid NOT NULL REFERENCES users(id),
    invitation_id    uuid NOT NULL REFERENCES invitations(id),
    event            text NOT NULL CONSTRAINT match_handovers_event_check
                     CHECK (event IN ('LEAVE', 'ABSENCE')),
    late_penalty     boolean NOT NULL,
    min_reliability  integer NOT NULL,
    window_ends_at   timestamptz NOT NULL,
    status           text NOT NULL CONSTRAINT match_handovers_status_check
                     CHECK (status IN ('OPEN', 'REFILLED', 'LAPSED')),
    refill_entry_id  uuid CONSTRAINT match_handovers_one_per_refill UNIQUE REFERENCES match_players(id),
    created_at       timestamptz NOT NULL,
    settled_at       timestamptz,
    CONSTRAINT match_handovers_settled
        CHECK ((status = 'OPEN') = (settled_at IS NULL)
               AND (status = 'REFILLED') = (refill_entry_id IS NOT NULL)),
    CONSTRAINT match_handovers_not_to_self CHECK (substitute_id <> player_id)
);
CREATE INDEX match_handovers_match_idx ON match_handovers (match_request_id, team, seq)
    WHERE status = 'OPEN';
CREATE INDEX match_handovers_window_idx ON match_handovers (window_ends_at) WHERE status = 'OPEN';
CREATE INDEX match_handovers_invitation_idx ON match_handovers (invitation_id);
COMMENT ON TABLE match_handovers IS
    'A place handed to a named substitute by a leave or an absence, and whether it was refilled in time.';
COMMENT ON COLUMN match_handovers.seq IS 'The order hand-overs were made in (created_at may tie).';
COMMENT ON COLUMN match_handovers.player_id IS 'The player who left and named the substitute.';
COMMENT ON COLUMN match_handovers.entry_id IS 'The leaver''s join that ended: its payment is the one refunded.';
COMMENT ON COLUMN match_handovers.team IS 'The team of the freed place.';
COMMENT ON COLUMN match_handovers.substitute_id IS 'The player named to take the place.';
COMMENT ON COLUMN match_handovers.invitation_id IS 'The substitute''s HANDOVER invitation.';
COMMENT ON COLUMN match_handovers.event IS 'LEAVE (refunded already) or ABSENCE.';
COMMENT ON COLUMN match_handovers.late_penalty IS
    'The absence was late: LATE_ABSENCE is applied when the window closes unfilled, never when refilled.';
COMMENT ON COLUMN match_handovers.min_reliability IS
    'The MIN_RELIABILITY of the absence''s write: for the SUBSTITUTE invitations sent when the hand-over passes on.';
COMMENT ON COLUMN match_handovers.window_ends_at IS 'Refilled before this (the start less handover_notice), the leaver is refunded.';
COMMENT ON COLUMN match_handovers.status IS
    'OPEN (window running), REFILLED (taken and paid in time), LAPSED (window closed unfilled).';
COMMENT ON COLUMN match_handovers.refill_entry_id IS 'The join that took the place in time.';
COMMENT ON COLUMN match_handovers.settled_at IS 'When it was refilled or lapsed.';

-- Whether p_player already plays at the time of match m: in it, or in another live match
-- overlapping it.
CREATE FUNCTION match_player_busy(m match_requests, p_player uuid)
    RETURNS boolean
    LANGUAGE sql STABLE
AS $$
    SELECT EXISTS (SELECT 1 FROM match_players mp
                     JOIN match_requests o ON o.id = mp.match_request_id
                    WHERE mp.player_id = p_player AND mp.left_at IS NULL
                      AND o.status IN ('PENDING_PAYMENT', 'OPEN', 'MATCHED', 'CONFIRMED')
                      AND (o.id = m.id OR (o.starts_at < m.ends_at AND m.starts_at < o.ends_at)));
$$;
COMMENT ON FUNCTION match_player_busy(match_requests, uuid) IS
    'A player is in a match, or in another live match at the same time.';

-- (0022, restated on match_player_busy)
CREATE OR REPLACE FUNCTION offer_candidate_free(m match_requests, p_player uuid, p_now timestamptz)
    RETURNS boolean
    LANGUAGE sql STABLE
AS $$
    SELECT NOT EXISTS (SELECT 1 FROM players p
                        WHERE p.user_id = p_player AND p.banned_until > p_now)
       AND NOT match_player_busy(m, p_player);
$$;

-- Starts the hand-over of the place p_player left in team p_team of locked match p_match
-- (join p_entry, ended by p_event): p_substitute gets a HANDOVER invitation for it, leaves
-- the match's waiting list and is told HANDOVER_OFFERED {matchRequestId, invitationId, team,
-- expiresAt, fromPlayerId}. 404 SUBSTITUTE_NOT_FOUND (no such user), 409
-- SUBSTITUTE_UNAVAILABLE (the leaver, or a player in this match or in another at that time).
-- A ban does not stop a hand-over: the leaver chose the player, as a shared link would.
-- Returns whether the refill window is open (a late penalty then waits for it).
CREATE FUNCTION match_handover_start(p_match uuid, p_player uuid, p_entry uuid, p_team text,
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
CREATE FUNCTION match_handover_refill(p_match uuid, p_player uuid, p_team text, p_entry uuid,
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
-- absence among them now costing its LATE_ABSENCE. Returns how many closed.
CREATE FUNCTION match_handovers_close(p_match uuid, p_now timestamptz)
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
CREATE FUNCTION match_handover_pass_on(p_match uuid, p_invitations uuid[], p_now timestamptz)
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

-- (0022, restated) Lapsed offers and hand-overs of locked match p_match -> EXPIRED, their
-- places offered to the waiting list, then a hand-over's to ordinary invitations; hand-over
-- windows that closed are settled. Returns how many offers and hand-overs lapsed.
CREATE OR REPLACE FUNCTION match_offers_settle(p_match uuid, p_now timestamptz)
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_lapsed integer;
    v_handovers uuid[];
BEGIN
    WITH e AS (UPDATE invitations SET status = 'EXPIRED'
                WHERE match_request_id = p_match AND kind IN ('OFFER', 'HANDOVER')
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

-- (0022, restated) DECLINE: a declined offer or hand-over passes its place on.
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

-- (0022, restated) JOIN: an open hand-over is the substitute's own place like an offer, and
-- a paid join refills the open hand-over of its team.
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
    -- the player's own open offer or hand-over, however they came in (the link takes it too)
    SELECT * INTO v_offer FROM invitations
     WHERE match_request_id = m.id AND player_id = p_player AND kind IN ('OFFER', 'HANDOVER')
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

-- (0022, restated) The place p_player leaves in locked match m: with a substitute named,
-- handed to them first (match_handover_start; p_late: the absence is late), then the
-- waiting list. Returns the join that ended.
DROP FUNCTION match_withdraw(match_requests, uuid, text, timestamptz);
CREATE FUNCTION match_withdraw(m match_requests, p_player uuid, p_event text, p_now timestamptz,
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

-- (0010, restated) LEAVE, with an optional substitute (match_handover_start's 404 and 409).
DROP FUNCTION match_leave(uuid, uuid, timestamptz);
CREATE FUNCTION match_leave(p_match uuid, p_player uuid, p_now timestamptz DEFAULT now(),
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

-- (0010, restated) ABSENCE, with an optional substitute: the place is theirs first and the
-- substitutes are invited only when they do not take it (match_handover_pass_on); a late
-- absence costs reliability at once, or when its hand-over window closes unfilled.
DROP FUNCTION match_absence(uuid, uuid, integer, timestamptz);
CREATE FUNCTION match_absence(p_match uuid, p_player uuid, p_min_reliability integer,
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

-- (0022, restated) Sweeper rule: the matches with lapsed offers or hand-overs, or hand-over
-- windows that closed, settled (match_offers_settle). Returns how many offers and hand-overs
-- lapsed.
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
                         WHERE i.kind IN ('OFFER', 'HANDOVER') AND i.status = 'PENDING'
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

-- (0022, restated) The invitation object says HANDOVER for a hand-over.
CREATE OR REPLACE FUNCTION json_invitation(i invitations) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'id', i.id,
        'matchRequestId', i.match_request_id,
        'kind', CASE WHEN i.kind IN ('OFFER', 'HANDOVER') THEN i.kind ELSE 'INVITATION' END,
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
