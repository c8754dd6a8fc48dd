-- 0055_organizer_index: a request's organizer is indexed once. match_requests_organizer_idx
-- (organizer, creation time, from 0002) has had no reader since the hold limit counts a
-- player's unpaid holds through match_requests_organizer_expiry_idx (organizer, expiry, from
-- 0034), which also serves every other look-up by organizer, the foreign key's from users
-- included. Both took an entry, on the leaf of a random player, for each new request and for
-- each change of status: status is in the conditions of the partial indexes, so a change of
-- it is never a HOT update and writes a new entry to every whole-table index.

DROP INDEX match_requests_organizer_idx;
