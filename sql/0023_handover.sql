-- 0023_handover: a player who leaves or reports an absence may hand the place to a named
-- substitute. A HANDOVER invitation holds the place for them as an offer does (the same
-- counters and CHECK), and match_handovers records the hand-over, which lasts until
-- match_policy.handover_notice before the start: refilled in that time, the leaver is
-- refunded in full and a late absence costs no reliability; unfilled, the penalty is applied
-- when the window closes.
-- The rules over these tables: sql/areas/65_places.sql.

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
