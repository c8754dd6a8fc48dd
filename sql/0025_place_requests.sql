-- 0025_place_requests: a player of another level asks for a place in a competitive PUBLIC
-- match, and every player in it answers: place_requests (one per player and match, so a
-- rejected player does not ask again and again) and place_request_answers (each player's
-- latest answer). An approved request is granted a PLACE invitation, held like an offer (the
-- same counters and CHECK), or a waiting-list entry when no place is free.
-- The rules over these tables: sql/areas/65_places.sql.

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
