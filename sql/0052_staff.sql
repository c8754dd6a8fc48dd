-- 0052_staff: who may act for a venue besides its owner, and the record of every write made on
-- a venue through the owner's routes (rules: sql/areas/68_staff.sql).

CREATE TABLE venue_staff (
    venue_id   uuid NOT NULL REFERENCES venues (id),
    user_id    uuid NOT NULL REFERENCES users (id),
    role       text NOT NULL CHECK (role IN ('MANAGER', 'DESK')),
    added_by   uuid NOT NULL REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (venue_id, user_id)
);
COMMENT ON TABLE venue_staff IS 'The staff of a venue: users who act for it with the rights of their role.';
COMMENT ON COLUMN venue_staff.venue_id IS 'The venue.';
COMMENT ON COLUMN venue_staff.user_id IS 'The staff member (a user of the identity provider, by its sub).';
COMMENT ON COLUMN venue_staff.role IS 'MANAGER: all the owner may do on the venue but change staff, suspend or reactivate it; DESK: read it, its day sheet, DESK blocks and check-in at the desk.';
COMMENT ON COLUMN venue_staff.added_by IS 'Who gave the role last.';
COMMENT ON COLUMN venue_staff.created_at IS 'When the user joined the staff.';
COMMENT ON COLUMN venue_staff.updated_at IS 'Last change of role.';
CREATE INDEX venue_staff_user ON venue_staff (user_id);

CREATE TABLE venue_audit (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    venue_id uuid NOT NULL REFERENCES venues (id),
    user_id  uuid NOT NULL REFERENCES users (id),
    role     text NOT NULL CHECK (role IN ('OWNER', 'MANAGER', 'DESK')),
    made_at  timestamptz NOT NULL DEFAULT now(),
    method   text NOT NULL,
    route    text NOT NULL,
    path     text NOT NULL,
    status   integer NOT NULL,
    request  jsonb
);
COMMENT ON TABLE venue_audit IS 'Every write made on a venue through the owner''s routes, by whom, in the write''s own transaction.';
COMMENT ON COLUMN venue_audit.venue_id IS 'The venue written.';
COMMENT ON COLUMN venue_audit.user_id IS 'Who wrote.';
COMMENT ON COLUMN venue_audit.role IS 'Their role at the venue then: OWNER, MANAGER or DESK.';
COMMENT ON COLUMN venue_audit.made_at IS 'When.';
COMMENT ON COLUMN venue_audit.method IS 'The HTTP method.';
COMMENT ON COLUMN venue_audit.route IS 'The route''s pattern: what was done.';
COMMENT ON COLUMN venue_audit.path IS 'The path: on what.';
COMMENT ON COLUMN venue_audit.status IS 'The status answered.';
COMMENT ON COLUMN venue_audit.request IS 'The JSON body sent, if any.';
CREATE INDEX venue_audit_venue ON venue_audit (venue_id, id);
CREATE INDEX venue_audit_user ON venue_audit (user_id);
