-- 0037_join_one_statement: a join is one statement, as the create is (0032).
--
-- The three routes that put the caller into a match (an invitation accepted, the shareable
-- link, the open-match feed) sent BEGIN, the JOIN function, a read of the match's JSON and
-- COMMIT: four round trips. The programs now send one statement,
-- match_request_json(<the JOIN function>), as the whole transaction: the JOIN runs first,
-- as the argument, and the match is read afterwards by a function of its own.
--
-- match_request_json is VOLATILE on purpose: a volatile PL/pgSQL function reads with a
-- snapshot taken when its query starts, after the JOIN before it wrote, so the answer shows
-- the caller's place and payment. A STABLE function would read with the statement's
-- snapshot and miss them. A match not found raises, so that the join it follows is rolled
-- back rather than committed without an answer.

CREATE FUNCTION match_request_json(p_id uuid) RETURNS json
    VOLATILE
    LANGUAGE plpgsql
AS $$
DECLARE
    v_json json;
BEGIN
    SELECT json_match_request(m) INTO v_json FROM match_requests m WHERE m.id = p_id;
    IF v_json IS NULL THEN
        RAISE EXCEPTION 'match request % not found', p_id;
    END IF;
    RETURN v_json;
END $$;
COMMENT ON FUNCTION match_request_json(uuid) IS
    'The match request''s JSON as the transaction now sees it, writes earlier in the same '
    'statement included; raises when there is no such match.';
