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
