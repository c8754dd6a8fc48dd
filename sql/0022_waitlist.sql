-- 0022_waitlist: a waiting list for full matches (match_waitlist), with exclusive timed
-- offers: an invitation of kind OFFER holds a freed place of one team for one player until it
-- expires (match_policy.offer_window). match_requests counts each team's open offers
-- (offers_a, offers_b, kept by a trigger on invitations), and a CHECK keeps players plus open
-- offers within the team's size: two open offers for one place, or a place both offered and
-- taken, cannot be written, whatever the code does.
-- The rules over these tables: sql/areas/65_places.sql.

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
