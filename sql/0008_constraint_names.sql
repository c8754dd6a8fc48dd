-- 0008_constraint_names: every constraint that the service maps to an answer of its own
-- (common/sql.c) carries a name given here, not one PostgreSQL made up, so that renaming a
-- column cannot silently change which answer a violation gets.

ALTER TABLE invitations
    RENAME CONSTRAINT invitations_match_request_id_player_id_key TO invitations_one_per_player;
ALTER TABLE venue_holidays
    RENAME CONSTRAINT venue_holidays_pkey TO venue_holidays_one_per_date;
ALTER TABLE resource_schedules
    RENAME CONSTRAINT resource_schedules_check TO resource_schedules_times_both_or_neither;
ALTER TABLE resource_schedules
    RENAME CONSTRAINT resource_schedules_check1 TO resource_schedules_closing_after_opening;
ALTER TABLE users
    RENAME CONSTRAINT users_issuer_subject_key TO users_one_per_identity;
ALTER TABLE match_requests
    RENAME CONSTRAINT match_requests_invitation_token_key TO match_requests_one_per_token;
