-- 0024_open_matches: open matches, and levels that move with results. match_requests gets
-- visibility (PUBLIC or PRIVATE) and competitive, whose defaults read transaction-local
-- settings: the write that opens a match sets them in its insert (match_new_terms), and the
-- new row is never written twice (a second write would check the double-booking constraint
-- again, against rival bookings still in flight, and deadlock with them). match_results holds
-- the result of a played match, player_ratings each player's Glicko-2 rating, rating_changes
-- what each rated result did to it.
-- The rules over these tables: sql/areas/70_open_matches.sql and sql/areas/75_results.sql.

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
-- The CHECK below needs it here; its current definition is in sql/areas/75_results.sql.
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
