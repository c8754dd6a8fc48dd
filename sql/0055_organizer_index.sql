-- 0055_organizer_index: a request's organizer is indexed once. match_requests_organizer_idx
-- (organizer, creation time, from 0002) has had no reader since the hold limit counts a
-- player's unpaid holds through match_requests_organizer_expiry_idx (organizer, expiry, from
-- 0034), which also serves every other look-up by organizer, the foreign key's from users
-- included. Each new request and each status change (a change of status moves the row to a
-- new version in every index, the partial ones on status being there) wrote an entry to both,
-- each on the leaf of a random player.

DROP INDEX match_requests_organizer_idx;
