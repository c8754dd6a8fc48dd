-- 68_staff: who may act for a venue, and the record of what they did. A venue's owner (a user
-- whose token has the OWNER role) may do everything on it; its staff (venue_staff) need no role
-- in their token: a MANAGER may do all the owner may but change the staff, suspend or reactivate
-- the venue; DESK may read the venue and its day sheet, add and remove DESK blocks and check
-- players in. The owner program asks venue_access for the venue a route's target belongs to and
-- the caller's role there before it runs the route (cgi-bin/owner.c), then acts for the owner;
-- every write it makes on a venue is recorded in venue_audit in the write's own transaction.

-- The venue that target p_id of kind p_kind ('venue', 'resource', 'match' or 'block') belongs
-- to, its owner, and the role there of p_user: OWNER (the owner, when p_owner_role: the token
-- has the OWNER role), MANAGER or DESK (staff), or NULL (no tie). No row when the target does
-- not exist. With p_lock the staff row is locked FOR SHARE until the transaction ends, so a
-- removal of the staff member waits for a write in flight, and one after it is refused.
CREATE OR REPLACE FUNCTION venue_access(p_kind text, p_id uuid, p_user uuid, p_owner_role boolean,
                                        p_lock boolean DEFAULT false)
    RETURNS TABLE (venue_id uuid, owner_id uuid, role text)
    LANGUAGE plpgsql
AS $$
DECLARE
    v_venue uuid;
    v_owner uuid;
    v_role text;
BEGIN
    SELECT v.id, v.owner_id INTO v_venue, v_owner
      FROM venues v
     WHERE v.id = CASE p_kind
                      WHEN 'venue' THEN p_id
                      WHEN 'resource' THEN (SELECT r.venue_id FROM resources r WHERE r.id = p_id)
                      WHEN 'match' THEN (SELECT r.venue_id FROM match_requests m
                                           JOIN resources r ON r.id = m.resource_id
                                          WHERE m.id = p_id)
                  END;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF v_owner = p_user AND p_owner_role THEN
        v_role := 'OWNER';
    ELSIF p_lock THEN
        SELECT s.role INTO v_role FROM venue_staff s
         WHERE s.venue_id = v_venue AND s.user_id = p_user FOR SHARE;
    ELSE
        SELECT s.role INTO v_role FROM venue_staff s
         WHERE s.venue_id = v_venue AND s.user_id = p_user;
    END IF;
    RETURN QUERY SELECT v_venue, v_owner, v_role;
END $$;
COMMENT ON FUNCTION venue_access(text, uuid, uuid, boolean, boolean) IS
    'The venue of a route''s target, its owner and the caller''s role there (OWNER, MANAGER, DESK or NULL).';

-- Gives p_role (MANAGER or DESK) at venue p_venue to the user of the identity provider's
-- subject p_subject, of the issuer of p_by (made as on a first request when new), by p_by;
-- a second call changes the role. 409 STAFF_IS_OWNER for the venue's owner. Returns the
-- staff member as JSON and whether they were new.
CREATE OR REPLACE FUNCTION venue_staff_put(p_venue uuid, p_by uuid, p_subject text, p_role text,
                                           p_now timestamptz DEFAULT now(),
                                           OUT doc json, OUT created boolean)
    LANGUAGE plpgsql
AS $$
DECLARE
    v_user uuid;
    s venue_staff;
BEGIN
    INSERT INTO users (issuer, subject)
    SELECT u.issuer, p_subject FROM users u WHERE u.id = p_by
    ON CONFLICT (issuer, subject) DO UPDATE SET subject = EXCLUDED.subject
    RETURNING id INTO v_user;
    IF v_user = (SELECT owner_id FROM venues WHERE id = p_venue) THEN
        PERFORM lifecycle_fail(409, 'STAFF_IS_OWNER', 'The owner of the venue needs no staff role.');
    END IF;
    INSERT INTO venue_staff AS x (venue_id, user_id, role, added_by, created_at, updated_at)
    VALUES (p_venue, v_user, p_role, p_by, p_now, p_now)
    ON CONFLICT (venue_id, user_id) DO UPDATE
       SET role = EXCLUDED.role, added_by = EXCLUDED.added_by, updated_at = EXCLUDED.updated_at
    RETURNING (x.xmax = 0) INTO created;
    SELECT * INTO s FROM venue_staff WHERE venue_id = p_venue AND user_id = v_user;
    doc := json_venue_staff(s, p_subject);
END $$;
COMMENT ON FUNCTION venue_staff_put(uuid, uuid, text, text, timestamptz) IS
    'Gives a staff role at a venue to a user of the identity provider; returns it and whether new.';

-- Takes user of subject p_subject (of the issuer of p_by) off venue p_venue's staff; false when
-- they were not on it.
CREATE OR REPLACE FUNCTION venue_staff_remove(p_venue uuid, p_by uuid, p_subject text)
    RETURNS boolean
    LANGUAGE plpgsql
AS $$
BEGIN
    DELETE FROM venue_staff s
     USING users u, users me
     WHERE me.id = p_by AND u.issuer = me.issuer AND u.subject = p_subject
       AND s.venue_id = p_venue AND s.user_id = u.id;
    RETURN FOUND;
END $$;
COMMENT ON FUNCTION venue_staff_remove(uuid, uuid, text) IS
    'Takes a user off a venue''s staff; false when not on it.';

-- What a staff member sees changes with their staff rows: their owner list's version.
CREATE OR REPLACE TRIGGER venue_staff_owner_list AFTER INSERT OR UPDATE OR DELETE ON venue_staff
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('user_id');

-- The validator of user p_user's owner lists: the versions of its scopes, their own, then
-- that of each owner whose venue they staff (owner_list_scopes), joined by dots (each read
-- once; a maximum would miss a write committed after a greater one was read). Any change of
-- the scopes stamps one of them: a staff row stamps its user, a venue that changes owner
-- both owners.
CREATE OR REPLACE FUNCTION owner_list_scopes(p_user uuid) RETURNS uuid[]
    LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN ARRAY(SELECT u.id
                   FROM (SELECT 0 AS n, p_user AS id
                         UNION
                         SELECT 1, v.owner_id FROM venue_staff s JOIN venues v ON v.id = s.venue_id
                          WHERE s.user_id = p_user) u
                  ORDER BY u.n, u.id);
END $$;
COMMENT ON FUNCTION owner_list_scopes(uuid) IS
    'The scopes whose versions validate a user''s owner lists: the user, then the owners whose venues they staff.';

CREATE OR REPLACE FUNCTION owner_list_version_of(p_scopes uuid[]) RETURNS TABLE (validator text)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT string_agg(COALESCE(a.version, 0)::text, '.' ORDER BY s.n)
      FROM unnest(p_scopes) WITH ORDINALITY s(id, n)
      LEFT JOIN answer_versions a ON a.scope_id = s.id;
END;
COMMENT ON FUNCTION owner_list_version_of(uuid[]) IS
    'The validator of owner lists read under these scopes (owner_list_scopes).';

CREATE OR REPLACE FUNCTION owner_list_version(p_user uuid) RETURNS text
    LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN (SELECT w.validator FROM owner_list_version_of(owner_list_scopes(p_user)) w);
END $$;
COMMENT ON FUNCTION owner_list_version(uuid) IS
    'Validator of a user''s owner lists: their version and those of the owners whose venues they staff.';

-- The owner lists kept in the database (owner_lists_kept, sql/0053_kept_answers.sql) for the
-- programs that keep nothing themselves (plain CGI): owner_list_keep keeps a page with the
-- scopes and validator read before it; owner_list_kept gives it back while the versions of
-- those scopes are still its validator, reading only the kept row and answer_versions. The
-- primary's only (the table is unlogged).
CREATE OR REPLACE FUNCTION owner_list_kept(p_user uuid, p_as_owner boolean, p_limit text,
                                           p_cursor text)
    RETURNS TABLE (validator text, body text, headers text)
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT k.validator, k.body, k.headers
      FROM owner_lists_kept k
     CROSS JOIN LATERAL owner_list_version_of(k.scopes) w
     WHERE k.user_id = p_user
       AND k.as_owner = p_as_owner
       AND k.page_limit = p_limit
       AND k.page_cursor = p_cursor
       AND k.validator = w.validator;
END;
COMMENT ON FUNCTION owner_list_kept(uuid, boolean, text, text) IS
    'The kept page of a user''s owner list, while still true; no row otherwise.';

CREATE OR REPLACE FUNCTION owner_list_keep(p_user uuid, p_as_owner boolean, p_limit text,
                                           p_cursor text, p_scopes uuid[], p_validator text,
                                           p_body text, p_headers text)
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO owner_lists_kept AS k (user_id, as_owner, page_limit, page_cursor, scopes,
                                       validator, body, headers, kept_at)
    VALUES (p_user, p_as_owner, p_limit, p_cursor, p_scopes, p_validator, p_body, p_headers,
            now())
    ON CONFLICT (user_id, as_owner, page_limit, page_cursor) DO UPDATE
       SET (scopes, validator, body, headers, kept_at) =
           (EXCLUDED.scopes, EXCLUDED.validator, EXCLUDED.body, EXCLUDED.headers,
            EXCLUDED.kept_at);
END $$;
COMMENT ON FUNCTION owner_list_keep(uuid, boolean, text, text, uuid[], text, text, text) IS
    'Keeps a page of a user''s owner list read under these scopes and validator.';
