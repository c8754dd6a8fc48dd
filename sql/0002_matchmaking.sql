-- 0002_matchmaking: the match-making tables: players (profiles), match_requests, match_players,
-- invitations, payments and refunds, notifications (the outbox) and reliability_events
-- (no-shows and reliability), with the constraints that hold whatever the code does: no more
-- players than places, no double booking of a court.
-- Nothing here is ever deleted: things that end change status.
-- The rules over these tables: sql/areas/60_lifecycle.sql (the life of a match),
-- sql/areas/40_players.sql (who is eligible), sql/areas/50_notifications.sql (the outbox),
-- sql/areas/65_places.sql (invitations and the places they hold).

CREATE TABLE players (
    user_id             uuid PRIMARY KEY REFERENCES users(id),
    display_name        text,
    skill_level         text CHECK (skill_level IN ('BEGINNER', 'INTERMEDIATE', 'ADVANCED', 'PROFESSIONAL')),
    home_latitude       double precision CHECK (home_latitude BETWEEN -90 AND 90),
    home_longitude      double precision CHECK (home_longitude BETWEEN -180 AND 180),
    match_notifications boolean NOT NULL DEFAULT true,
    reliability_score   integer NOT NULL DEFAULT 100 CHECK (reliability_score BETWEEN 0 AND 100),
    no_show_count       integer NOT NULL DEFAULT 0 CHECK (no_show_count >= 0),
    banned_until        timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CHECK ((home_latitude IS NULL) = (home_longitude IS NULL))
);
COMMENT ON TABLE players IS 'Match-making profile of a user; a user without one is never invited.';
COMMENT ON COLUMN players.user_id IS 'The user (playerId in the API).';
COMMENT ON COLUMN players.display_name IS 'Name shown to other players, optional.';
COMMENT ON COLUMN players.skill_level IS 'BEGINNER, INTERMEDIATE, ADVANCED or PROFESSIONAL; NULL until set.';
COMMENT ON COLUMN players.home_latitude IS 'Where the player wants matches nearby; NULL until set.';
COMMENT ON COLUMN players.home_longitude IS 'Longitude of the home location.';
COMMENT ON COLUMN players.match_notifications IS 'false: never invited automatically.';
COMMENT ON COLUMN players.reliability_score IS '0..100, starts at 100; no-shows and late absences lower it.';
COMMENT ON COLUMN players.no_show_count IS 'All no-shows ever recorded.';
COMMENT ON COLUMN players.banned_until IS 'No automatic invitations before this time.';
COMMENT ON COLUMN players.created_at IS 'Creation time.';
COMMENT ON COLUMN players.updated_at IS 'Last change.';
CREATE INDEX players_home_earth_idx ON players USING gist (ll_to_earth(home_latitude, home_longitude))
    WHERE home_latitude IS NOT NULL AND match_notifications;

CREATE TABLE match_requests (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    resource_id      uuid NOT NULL REFERENCES resources(id),
    organizer_id     uuid NOT NULL REFERENCES users(id),
    booking_date     date NOT NULL,
    start_time       time NOT NULL,
    end_time         time NOT NULL CHECK (end_time > start_time),
    starts_at        timestamptz NOT NULL,
    ends_at          timestamptz NOT NULL CHECK (ends_at > starts_at),
    format           text NOT NULL CHECK (format IN ('TWO_VS_TWO', 'ONE_VS_ONE', 'AMERICANO')),
    skill_level      text NOT NULL CHECK (skill_level IN ('BEGINNER', 'INTERMEDIATE', 'ADVANCED', 'PROFESSIONAL')),
    status           text NOT NULL DEFAULT 'PENDING_PAYMENT'
                     CHECK (status IN ('PENDING_PAYMENT', 'OPEN', 'MATCHED', 'CONFIRMED', 'COMPLETED', 'CANCELLED')),
    invitation_token uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    team_size        integer NOT NULL CHECK (team_size BETWEEN 1 AND 2),
    team_a_count     integer NOT NULL DEFAULT 0,
    team_b_count     integer NOT NULL DEFAULT 0,
    court_price      numeric(12, 2) NOT NULL CHECK (court_price > 0),
    price_per_player numeric(12, 2) NOT NULL CHECK (price_per_player >= 0),
    currency         char(3) NOT NULL,
    custom_message   text,
    search_latitude  double precision NOT NULL CHECK (search_latitude BETWEEN -90 AND 90),
    search_longitude double precision NOT NULL CHECK (search_longitude BETWEEN -180 AND 180),
    search_radius_km numeric(8, 3) NOT NULL CHECK (search_radius_km > 0),
    expires_at       timestamptz NOT NULL,
    cancel_reason    text CHECK (cancel_reason IN ('ORGANIZER', 'PAYMENT_EXPIRED', 'NOT_FILLED')),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- never more players than places, whatever the code does
    CONSTRAINT match_requests_team_capacity
        CHECK (team_a_count BETWEEN 0 AND team_size AND team_b_count BETWEEN 0 AND team_size),
    CHECK ((status = 'CANCELLED') = (cancel_reason IS NOT NULL)),
    -- never two live requests on the same court at overlapping times
    CONSTRAINT match_requests_no_double_booking EXCLUDE USING gist
        (resource_id WITH =, tsrange(booking_date + start_time, booking_date + end_time) WITH &&)
        WHERE (status <> 'CANCELLED')
);
COMMENT ON TABLE match_requests IS 'A court slot held or booked by an organizer, and the match filling it.';
COMMENT ON COLUMN match_requests.resource_id IS 'The court booked.';
COMMENT ON COLUMN match_requests.organizer_id IS 'The player who opened it and paid the court.';
COMMENT ON COLUMN match_requests.booking_date IS 'Local date at the venue.';
COMMENT ON COLUMN match_requests.start_time IS 'Local start time at the venue.';
COMMENT ON COLUMN match_requests.end_time IS 'Local end time at the venue.';
COMMENT ON COLUMN match_requests.starts_at IS 'Start as an instant, from the venue time zone when created.';
COMMENT ON COLUMN match_requests.ends_at IS 'End as an instant.';
COMMENT ON COLUMN match_requests.format IS 'TWO_VS_TWO, ONE_VS_ONE or AMERICANO.';
COMMENT ON COLUMN match_requests.skill_level IS 'Level of players invited.';
COMMENT ON COLUMN match_requests.status IS 'PENDING_PAYMENT, OPEN, MATCHED, CONFIRMED, COMPLETED or CANCELLED.';
COMMENT ON COLUMN match_requests.invitation_token IS 'Shareable token to join directly; shown to players of the match only.';
COMMENT ON COLUMN match_requests.team_size IS 'Places per team: 1 for ONE_VS_ONE, 2 otherwise.';
COMMENT ON COLUMN match_requests.team_a_count IS 'Players now in TEAM_A, kept by trigger from match_players.';
COMMENT ON COLUMN match_requests.team_b_count IS 'Players now in TEAM_B, kept by trigger from match_players.';
COMMENT ON COLUMN match_requests.court_price IS 'Price of the slot when it was booked.';
COMMENT ON COLUMN match_requests.price_per_player IS 'court_price / players, rounded down to the cent.';
COMMENT ON COLUMN match_requests.currency IS 'Currency of the prices.';
COMMENT ON COLUMN match_requests.custom_message IS 'Organizer text included in invitations.';
COMMENT ON COLUMN match_requests.search_latitude IS 'Centre of the area where players are invited.';
COMMENT ON COLUMN match_requests.search_longitude IS 'Centre of the area where players are invited.';
COMMENT ON COLUMN match_requests.search_radius_km IS 'Radius of the area where players are invited.';
COMMENT ON COLUMN match_requests.expires_at IS 'End of the payment window of PENDING_PAYMENT.';
COMMENT ON COLUMN match_requests.cancel_reason IS 'ORGANIZER, PAYMENT_EXPIRED or NOT_FILLED; set when CANCELLED.';
COMMENT ON COLUMN match_requests.created_at IS 'Creation time.';
COMMENT ON COLUMN match_requests.updated_at IS 'Last change.';
CREATE INDEX match_requests_organizer_idx ON match_requests (organizer_id, created_at);
CREATE INDEX match_requests_expiry_idx ON match_requests (expires_at) WHERE status = 'PENDING_PAYMENT';
CREATE INDEX match_requests_starts_idx ON match_requests (starts_at) WHERE status = 'OPEN';
CREATE INDEX match_requests_ends_idx ON match_requests (ends_at) WHERE status IN ('MATCHED', 'CONFIRMED');

CREATE TABLE match_players (
    match_request_id uuid NOT NULL REFERENCES match_requests(id),
    player_id        uuid NOT NULL REFERENCES users(id),
    team             text NOT NULL CHECK (team IN ('TEAM_A', 'TEAM_B')),
    role             text NOT NULL CHECK (role IN ('ORGANIZER', 'PLAYER')),
    joined_at        timestamptz NOT NULL DEFAULT now(),
    checked_in_at    timestamptz,
    left_at          timestamptz,
    left_reason      text CHECK (left_reason IN ('LEFT', 'ABSENT')),
    CHECK ((left_at IS NULL) = (left_reason IS NULL))
);
COMMENT ON TABLE match_players IS 'Who plays in a match; a player who leaves keeps the row with left_at set.';
COMMENT ON COLUMN match_players.match_request_id IS 'The match.';
COMMENT ON COLUMN match_players.player_id IS 'The player (users.id).';
COMMENT ON COLUMN match_players.team IS 'TEAM_A or TEAM_B.';
COMMENT ON COLUMN match_players.role IS 'ORGANIZER or PLAYER.';
COMMENT ON COLUMN match_players.joined_at IS 'When the player joined.';
COMMENT ON COLUMN match_players.checked_in_at IS 'GPS check-in time, NULL until checked in.';
COMMENT ON COLUMN match_players.left_at IS 'When the player left or reported absence; NULL while in the match.';
COMMENT ON COLUMN match_players.left_reason IS 'LEFT (more than 48 h ahead, refunded) or ABSENT (late withdrawal).';
CREATE UNIQUE INDEX match_players_active_idx ON match_players (match_request_id, player_id)
    WHERE left_at IS NULL;
CREATE INDEX match_players_player_idx ON match_players (player_id, joined_at);

CREATE TABLE invitations (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    match_request_id uuid NOT NULL REFERENCES match_requests(id),
    player_id        uuid NOT NULL REFERENCES users(id),
    kind             text NOT NULL DEFAULT 'INVITE' CHECK (kind IN ('INVITE', 'SUBSTITUTE')),
    status           text NOT NULL DEFAULT 'PENDING'
                     CHECK (status IN ('PENDING', 'ACCEPTED', 'DECLINED', 'EXPIRED')),
    sent_at          timestamptz NOT NULL DEFAULT now(),
    responded_at     timestamptz,
    UNIQUE (match_request_id, player_id)
);
COMMENT ON TABLE invitations IS 'An invitation of one player to one match; at most one per player and match.';
COMMENT ON COLUMN invitations.match_request_id IS 'The match.';
COMMENT ON COLUMN invitations.player_id IS 'The invited player.';
COMMENT ON COLUMN invitations.kind IS 'INVITE (on payment) or SUBSTITUTE (after an absence).';
COMMENT ON COLUMN invitations.status IS 'PENDING, ACCEPTED, DECLINED or EXPIRED.';
COMMENT ON COLUMN invitations.sent_at IS 'When it was sent.';
COMMENT ON COLUMN invitations.responded_at IS 'When the player accepted or declined.';
CREATE INDEX invitations_player_idx ON invitations (player_id, sent_at) WHERE status = 'PENDING';

CREATE TABLE payments (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    match_request_id uuid NOT NULL REFERENCES match_requests(id),
    player_id        uuid NOT NULL REFERENCES users(id),
    kind             text NOT NULL CHECK (kind IN ('PAYMENT', 'REFUND')),
    amount           numeric(12, 2) NOT NULL CHECK (amount >= 0),
    currency         char(3) NOT NULL,
    status           text NOT NULL CHECK (status IN ('PENDING', 'PAID', 'CANCELLED', 'REFUNDED')),
    provider_ref     text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE payments IS 'Every payment and refund, never deleted.';
COMMENT ON COLUMN payments.match_request_id IS 'The match paid for.';
COMMENT ON COLUMN payments.player_id IS 'Who paid or is refunded.';
COMMENT ON COLUMN payments.kind IS 'PAYMENT or REFUND.';
COMMENT ON COLUMN payments.amount IS 'Exact amount.';
COMMENT ON COLUMN payments.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN payments.status IS 'PAYMENT: PENDING, PAID or CANCELLED; REFUND: REFUNDED.';
COMMENT ON COLUMN payments.provider_ref IS 'Reference at the payment provider, when there is one.';
COMMENT ON COLUMN payments.created_at IS 'Creation time.';
COMMENT ON COLUMN payments.updated_at IS 'Last change of status.';
CREATE INDEX payments_match_idx ON payments (match_request_id, player_id);
-- one refund per player and match: refunding twice must be impossible
CREATE UNIQUE INDEX payments_one_refund_idx ON payments (match_request_id, player_id)
    WHERE kind = 'REFUND';

CREATE TABLE notifications (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    recipient_id uuid NOT NULL REFERENCES users(id),
    type         text NOT NULL,
    payload      jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    read_at      timestamptz,
    delivered_at timestamptz
);
COMMENT ON TABLE notifications IS 'Outbox of notifications; e-mail/push delivery is fed from here.';
COMMENT ON COLUMN notifications.recipient_id IS 'Who is told.';
COMMENT ON COLUMN notifications.type IS 'Event name, e.g. MATCH_INVITATION, MATCH_CANCELLED, MATCH_FULL.';
COMMENT ON COLUMN notifications.payload IS 'Event data (matchRequestId and the like).';
COMMENT ON COLUMN notifications.created_at IS 'When the event happened.';
COMMENT ON COLUMN notifications.read_at IS 'When the recipient marked it read.';
COMMENT ON COLUMN notifications.delivered_at IS 'When an outside deliverer sent it on.';
CREATE INDEX notifications_recipient_idx ON notifications (recipient_id, created_at);
CREATE INDEX notifications_undelivered_idx ON notifications (created_at) WHERE delivered_at IS NULL;

CREATE TABLE reliability_events (
    player_id        uuid NOT NULL REFERENCES users(id),
    match_request_id uuid NOT NULL REFERENCES match_requests(id),
    kind             text NOT NULL CHECK (kind IN ('NO_SHOW', 'LATE_ABSENCE', 'ATTENDED')),
    delta            integer NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (player_id, match_request_id, kind)
);
COMMENT ON TABLE reliability_events IS 'What changed a reliability score; the key makes each event count once.';
COMMENT ON COLUMN reliability_events.player_id IS 'The player.';
COMMENT ON COLUMN reliability_events.match_request_id IS 'The match it happened in.';
COMMENT ON COLUMN reliability_events.kind IS 'NO_SHOW (-25), LATE_ABSENCE (-10) or ATTENDED (+5).';
COMMENT ON COLUMN reliability_events.delta IS 'Change applied to the score before clamping to 0..100.';
COMMENT ON COLUMN reliability_events.created_at IS 'When it was recorded.';
CREATE INDEX reliability_events_recent_idx ON reliability_events (player_id, created_at)
    WHERE kind = 'NO_SHOW';
