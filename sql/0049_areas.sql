-- 0049_areas: functions, views and triggers now live in sql/areas/, in their current form;
-- what the migrations before this one created and no area defines goes.
DROP FUNCTION IF EXISTS sql_function_keep_plans(regprocedure, boolean);

-- comments that spoke of the migration that made them
COMMENT ON COLUMN match_requests.venue_latitude IS
    'Where the match is played: its venue''s latitude, kept by triggers (sql/areas/70_open_matches.sql).';
COMMENT ON COLUMN match_requests.venue_longitude IS
    'Where the match is played: its venue''s longitude, kept by triggers (sql/areas/70_open_matches.sql).';
COMMENT ON TABLE answer_versions IS
    'Version of what a venue or a court contributes to every slot answer of its courts, or of what an owner''s venue list shows; no row = never changed. Rows are never deleted.';
