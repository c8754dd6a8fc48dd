-- 0014_paging: the indexes of keyset paging (common/page.h). Each list that grows without
-- bound is read a page at a time from its sort key onwards: an index on (filter, sort key,
-- id) lets a page read only its own rows, however deep it is. The indexes of venues,
-- resources, invitations and notifications that lacked the tie-breaking id are replaced.
-- The lists that read them: the programs of cgi-bin/, through common/page.h.

DROP INDEX venues_owner_idx;
CREATE INDEX venues_owner_idx ON venues (owner_id, created_at, id);

DROP INDEX venues_status_idx;
CREATE INDEX venues_status_idx ON venues (status, created_at, id);
-- the administrators' list without a status filter
CREATE INDEX venues_created_idx ON venues (created_at, id);
-- the players' list, by name
CREATE INDEX venues_active_name_idx ON venues (name, id) WHERE status = 'ACTIVE';

DROP INDEX resources_status_idx;
CREATE INDEX resources_status_idx ON resources (status, created_at, id);
CREATE INDEX resources_created_idx ON resources (created_at, id);

DROP INDEX invitations_player_idx;
CREATE INDEX invitations_player_idx ON invitations (player_id, sent_at, id)
    WHERE status = 'PENDING';

DROP INDEX notifications_recipient_idx;
CREATE INDEX notifications_recipient_idx ON notifications (recipient_id, created_at, id);
