-- 0021_series: weekly series. A group that plays every Tuesday at 19:00 opens the weeks in
-- one call: each date becomes an ordinary match request, made by match_hold (0010) with its
-- own payment hold, booking rules and double-booking guard. A date that cannot be booked is
-- skipped with the code a single booking of it would have been refused with; it is never a
-- reason to refuse the others. The series only groups its matches: it has no state of its
-- own that the lifecycle reads, but for the unpaid-holds limit, where it counts once.

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
