-- 0006_match_requests: once the first home of the state changes shared by several programs
-- (ending a lapsed hold, recording reliability, inviting players). They were rewritten, with
-- every other transition, in 0010_lifecycle.sql, which drops what this file used to create on
-- databases that applied it. Left empty so that each rule is written in one place only.
SELECT 1;
