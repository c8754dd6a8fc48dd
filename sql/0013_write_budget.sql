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
