-- 0024_open_matches: open matches, and levels that move with their results.
--
-- A match is PUBLIC (the default: listed in the feed, joinable by anyone it suits) or
-- PRIVATE (only by its link or an invitation; anyone not in it gets 404, as if it did not
-- exist), and competitive (the default: only players of its level join from the feed) or
-- friendly (any level). Both are set when the match is opened and fixed once it is paid (a
-- trigger). They are set as the match is inserted, not updated after: the write that opens
-- a match (or a series of them) first calls match_new_terms, whose transaction-local
-- settings the columns' defaults read, so match_hold stays as it is and a second write of
-- the new row (which would check the double-booking constraint again, against rival
-- bookings still in flight, and deadlock with them) never happens.
--
-- A PRIVATE match sends no automatic invitations (on payment, after an absence, after a
-- hand-over nobody took): they would show it to strangers.
--
-- A player of a match that is CONFIRMED (everyone checked in) or has started reports its
-- result once: the games of each set, TEAM_A's first. A player of the other team confirms
-- or disputes it; the sweeper confirms what nobody disputed 48 hours after the end
-- (match_policy.result_confirm_after). AMERICANO has no result.
--
-- A confirmed result of a competitive match is one Glicko-2 rating period for each of its
-- players (Glickman, "Example of the Glicko-2 system"; tau 0.5, convergence tolerance
-- 0.000001): a single game against the opposing side, scored 1 or 0, the side being one
-- opponent with the mean of their ratings and the root mean square of their deviations. A
-- player's rating starts from the declared level (BEGINNER 1200, INTERMEDIATE 1500, ADVANCED
-- 1800, PROFESSIONAL 2100; 1500 without one) with deviation 350 and volatility 0.06; every
-- 30 days without a rated match is an empty period (the deviation grows). The effective
-- level is the rating's band once the player has 5 rated matches and a deviation below 150,
-- the declared level before that; the feed and joining from it use it (match_player_level).
--
-- A result is rated once: under the lock of its row, with match_results.rated_at recording
-- it, so two confirmations at once or a replayed sweeper change nothing more.

-- json_match_request's body reads the row type: it is restated below, with the new fields

ALTER TABLE match_requests
    ADD COLUMN visibility text NOT NULL DEFAULT 'PUBLIC'
        CONSTRAINT match_requests_visibility_check CHECK (visibility IN ('PUBLIC', 'PRIVATE')),
    ADD COLUMN competitive boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN match_requests.visibility IS
    'PUBLIC (in the open-match feed) or PRIVATE (only by link or invitation; 404 to others).';
COMMENT ON COLUMN match_requests.competitive IS
    'true: only players of its level join from the feed; false: a friendly match, any level.';
-- (rows already there keep the constant defaults above; new ones take match_new_terms')
ALTER TABLE match_requests
    ALTER COLUMN visibility
        SET DEFAULT COALESCE(NULLIF(current_setting('courts.new_match_visibility', true), ''),
                             'PUBLIC'),
    ALTER COLUMN competitive
        SET DEFAULT COALESCE(NULLIF(current_setting('courts.new_match_competitive', true), '')::boolean,
                             true);

ALTER TABLE match_policy ADD COLUMN result_confirm_after interval NOT NULL DEFAULT '48 hours'
    CONSTRAINT match_policy_result_confirm_after_check CHECK (result_confirm_after >= interval '0');
COMMENT ON COLUMN match_policy.result_confirm_after IS
    'A result nobody disputed is confirmed this long after the match''s end.';

CREATE TABLE match_results (
    match_request_id uuid PRIMARY KEY REFERENCES match_requests(id),
    sets             jsonb NOT NULL,
    winner           text NOT NULL CONSTRAINT match_results_winner_check
                     CHECK (winner IN ('TEAM_A', 'TEAM_B')),
    status           text NOT NULL CONSTRAINT match_results_status_check
                     CHECK (status IN ('PENDING', 'CONFIRMED', 'DISPUTED')),
    reported_by      uuid NOT NULL REFERENCES users(id),
    reported_team    text NOT NULL CONSTRAINT match_results_reported_team_check
                     CHECK (reported_team IN ('TEAM_A', 'TEAM_B')),
    reported_at      timestamptz NOT NULL,
    answered_by      uuid REFERENCES users(id),
    answered_at      timestamptz,
    dispute_reason   text,
    rated_at         timestamptz,
    CONSTRAINT match_results_answered CHECK ((status = 'PENDING') = (answered_at IS NULL)),
    CONSTRAINT match_results_rated_confirmed CHECK (rated_at IS NULL OR status = 'CONFIRMED')
);
CREATE INDEX match_results_pending_idx ON match_results (reported_at) WHERE status = 'PENDING';
COMMENT ON TABLE match_results IS 'The result of a played match, one per match, as reported and answered.';
COMMENT ON COLUMN match_results.sets IS 'The games of each set, TEAM_A''s first: [[6, 4], [3, 6], [10, 8]].';
COMMENT ON COLUMN match_results.winner IS 'The team that won more sets.';
COMMENT ON COLUMN match_results.status IS
    'PENDING (reported), CONFIRMED (by the other team or the sweeper), DISPUTED (by the other team).';
COMMENT ON COLUMN match_results.reported_team IS 'The reporter''s team: the other one answers.';
COMMENT ON COLUMN match_results.answered_by IS 'Who confirmed or disputed it; NULL when the sweeper confirmed it.';
COMMENT ON COLUMN match_results.dispute_reason IS 'The reason given with a dispute.';
COMMENT ON COLUMN match_results.rated_at IS 'When the ratings moved by it (competitive matches only).';

CREATE TABLE player_ratings (
    player_id     uuid PRIMARY KEY REFERENCES users(id),
    rating        double precision NOT NULL,
    deviation     double precision NOT NULL CONSTRAINT player_ratings_deviation_check
                  CHECK (deviation > 0 AND deviation <= 350),
    volatility    double precision NOT NULL CONSTRAINT player_ratings_volatility_check
                  CHECK (volatility > 0),
    rated_matches integer NOT NULL CONSTRAINT player_ratings_rated_matches_check
                  CHECK (rated_matches >= 0),
    rated_at      timestamptz NOT NULL
);
COMMENT ON TABLE player_ratings IS 'A player''s Glicko-2 rating after their last rated match (none before).';
COMMENT ON COLUMN player_ratings.rated_at IS 'The last rating period with a game: empty periods count from it.';

CREATE TABLE rating_changes (
    player_id        uuid NOT NULL REFERENCES users(id),
    match_request_id uuid NOT NULL REFERENCES match_requests(id),
    rating_before    double precision NOT NULL,
    deviation_before double precision NOT NULL,
    rating_after     double precision NOT NULL,
    deviation_after  double precision NOT NULL,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (player_id, match_request_id)
);
COMMENT ON TABLE rating_changes IS 'What each rated result did to each of its players'' rating, once per player and match.';
COMMENT ON COLUMN rating_changes.rating_before IS 'After the empty periods of inactivity, before the game.';

-- The winner of sets [[a, b], ...] (TEAM_A's games first), or NULL when they are not a result:
-- 1 to 5 sets of two whole numbers 0..99 with a winner each, and one team winning more.
CREATE FUNCTION result_winner(p_sets jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE WHEN bool_and(ok) AND count(*) BETWEEN 1 AND 5 AND sum(won_a) <> sum(won_b)
                THEN CASE WHEN sum(won_a) > sum(won_b) THEN 'TEAM_A' ELSE 'TEAM_B' END END
      FROM (SELECT jsonb_typeof(s) = 'array' AND jsonb_array_length(s) = 2
                   AND jsonb_typeof(s->0) = 'number' AND jsonb_typeof(s->1) = 'number'
                   AND (s->>0) ~ '^[0-9]{1,2}$' AND (s->>1) ~ '^[0-9]{1,2}$'
                   AND (s->>0) <> (s->>1) AS ok,
                   CASE WHEN (s->>0) ~ '^[0-9]+$' AND (s->>1) ~ '^[0-9]+$'
                        AND (s->>0)::int > (s->>1)::int THEN 1 ELSE 0 END AS won_a,
                   CASE WHEN (s->>0) ~ '^[0-9]+$' AND (s->>1) ~ '^[0-9]+$'
                        AND (s->>0)::int < (s->>1)::int THEN 1 ELSE 0 END AS won_b
              FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_sets) = 'array'
                                             THEN p_sets ELSE '[]' END) s) x;
$$;
COMMENT ON FUNCTION result_winner(jsonb) IS 'The winning team of a list of sets, NULL if it is not a result.';
ALTER TABLE match_results ADD CONSTRAINT match_results_sets_valid
    CHECK (result_winner(sets) IS NOT DISTINCT FROM winner);
