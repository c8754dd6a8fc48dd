-- 0013_write_budget: write_budgets, a token bucket of writes per caller, so that a flood of
-- writes from one account is refused with 429 (administrators are exempt). It lives in the
-- database because the programs run as separate processes (CGI, mod_fcgid, pools, several
-- machines) that share no memory.
-- The rule over this table: sql/areas/55_fair_use.sql (write_budget_spend).

CREATE TABLE write_budgets (
    user_id      uuid PRIMARY KEY REFERENCES users (id),
    tokens       double precision NOT NULL,
    refreshed_at timestamptz NOT NULL
);
COMMENT ON TABLE write_budgets IS 'Token bucket of writes per caller (429 when empty).';
COMMENT ON COLUMN write_budgets.user_id IS 'The caller.';
COMMENT ON COLUMN write_budgets.tokens IS 'Writes left at refreshed_at (may be fractional).';
COMMENT ON COLUMN write_budgets.refreshed_at IS 'When tokens was last computed.';
