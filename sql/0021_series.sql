-- 0021_series: weekly series: match_series, the same court, weekday and time for a number of
-- weeks, opened in one call, and match_series_matches, the ordinary match request made for
-- each date. A date that cannot be booked is skipped with its code (match_series.skipped).
-- The series only groups its matches: the lifecycle reads no state of its own but for the
-- unpaid-holds limit, where a series counts once.
-- The rules over these tables: sql/areas/80_series.sql.

CREATE TABLE match_series (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organizer_id uuid NOT NULL REFERENCES users(id),
    resource_id  uuid NOT NULL REFERENCES resources(id),
    first_date   date NOT NULL,
    start_time   time NOT NULL,
    weeks        integer NOT NULL CONSTRAINT match_series_weeks_check CHECK (weeks BETWEEN 1 AND 26),
    skipped      jsonb NOT NULL DEFAULT '[]'
                 CONSTRAINT match_series_skipped_check CHECK (jsonb_typeof(skipped) = 'array'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    cancelled_at timestamptz
);
CREATE INDEX match_series_organizer_idx ON match_series (organizer_id);
CREATE INDEX match_series_resource_idx ON match_series (resource_id);
COMMENT ON TABLE match_series IS
    'A weekly series: the same court, weekday and time for a number of weeks, opened in one call.';
COMMENT ON COLUMN match_series.skipped IS
    'The dates not booked when the series was made: [{"bookingDate", "code"}], oldest first.';
COMMENT ON COLUMN match_series.cancelled_at IS
    'When the organizer cancelled the series (its future matches then); NULL while it runs.';

-- A match belongs to at most one series (its date is the match's own).
CREATE TABLE match_series_matches (
    series_id        uuid NOT NULL REFERENCES match_series(id),
    match_request_id uuid PRIMARY KEY REFERENCES match_requests(id)
);
CREATE INDEX match_series_matches_series_idx ON match_series_matches (series_id);
COMMENT ON TABLE match_series_matches IS 'The match requests a series made, one per date.';
