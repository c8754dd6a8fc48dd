-- 0011_idempotency: idempotency_keys, the answers of writes sent with an Idempotency-Key, so
-- that a client that never saw the answer (a dropped connection, a worker killed after the
-- commit) sends the write again with the same key and gets the first answer, without the work
-- being done twice. The driver (common/idem.c) claims the key inside the transaction of the
-- write, so the key, the work and the answer commit together or not at all; a concurrent
-- repeat waits on the claim and then replays; a write that failed stored nothing and runs again.
-- The sweeper deletes the old keys: sql/areas/95_sweeper.sql.

CREATE TABLE idempotency_keys (
    user_id      uuid NOT NULL REFERENCES users (id),
    key          text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_hash text NOT NULL,
    status       integer CHECK (status BETWEEN 200 AND 299),
    content_type text,
    body         text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT idempotency_keys_one_per_caller PRIMARY KEY (user_id, key)
);
COMMENT ON TABLE idempotency_keys IS 'Answers of writes sent with an Idempotency-Key, kept at least 24 hours.';
COMMENT ON COLUMN idempotency_keys.user_id IS 'The caller: a key is scoped to who sent it.';
COMMENT ON COLUMN idempotency_keys.key IS 'The Idempotency-Key header, 1..255 visible ASCII characters.';
COMMENT ON COLUMN idempotency_keys.request_hash IS 'SHA-256 of method, path, query and body: the same key with another request is refused.';
COMMENT ON COLUMN idempotency_keys.status IS 'HTTP status of the first answer; NULL only inside the claiming transaction.';
COMMENT ON COLUMN idempotency_keys.content_type IS 'Content-Type of the first answer, NULL for 204.';
COMMENT ON COLUMN idempotency_keys.body IS 'Body of the first answer, NULL for 204.';
COMMENT ON COLUMN idempotency_keys.created_at IS 'When the key was first used.';
CREATE INDEX idempotency_keys_age_idx ON idempotency_keys (created_at);
