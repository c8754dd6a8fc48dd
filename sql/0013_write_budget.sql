-- 0013_write_budget: a flood of writes from one account is refused with 429.
--
-- Each caller (a player or an owner; administrators are exempt) has a token bucket of writes:
-- it holds at most p_burst writes and refills at p_per_minute writes a minute. It lives in the
-- database because the programs run as separate processes (CGI, mod_fcgid, pools, several
-- machines) that share no memory; one guarded upsert per write keeps it exact under races.

CREATE TABLE write_budgets (
    user_id      uuid PRIMARY KEY REFERENCES users (id),
    tokens       double precision NOT NULL,
    refreshed_at timestamptz NOT NULL
);
COMMENT ON TABLE write_budgets IS 'Token bucket of writes per caller (429 when empty).';
COMMENT ON COLUMN write_budgets.user_id IS 'The caller.';
COMMENT ON COLUMN write_budgets.tokens IS 'Writes left at refreshed_at (may be fractional).';
COMMENT ON COLUMN write_budgets.refreshed_at IS 'When tokens was last computed.';

-- Spends one write of p_user's budget. Returns 0 when it was spent, or the whole seconds to
-- wait until one write is available again (nothing spent).
CREATE FUNCTION write_budget_spend(p_user uuid, p_per_minute integer, p_burst integer,
                                   p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_tokens double precision;
BEGIN
    INSERT INTO write_budgets AS b (user_id, tokens, refreshed_at)
    VALUES (p_user, p_burst - 1, p_now)
    ON CONFLICT (user_id) DO UPDATE
       SET tokens = least(p_burst, b.tokens + extract(epoch FROM p_now - b.refreshed_at)
                                              * p_per_minute / 60.0) - 1,
           refreshed_at = p_now
     WHERE least(p_burst, b.tokens + extract(epoch FROM p_now - b.refreshed_at)
                                     * p_per_minute / 60.0) >= 1;
    IF FOUND THEN
        RETURN 0;
    END IF;
    SELECT b.tokens + extract(epoch FROM p_now - b.refreshed_at) * p_per_minute / 60.0
      INTO v_tokens FROM write_budgets b WHERE b.user_id = p_user;
    RETURN greatest(1, ceil((1 - v_tokens) * 60.0 / p_per_minute))::integer;
END $$;
COMMENT ON FUNCTION write_budget_spend(uuid, integer, integer, timestamptz) IS
    'Spends one write of a caller''s budget: 0, or the seconds to wait before the next one.';
