-- The payment provider's side of the ledger: what the service asks of the provider, and what
-- the provider's word does to a share.
--
-- A share paid online (PAYMENT_PROVIDER=stripe) is a payments row whose provider_ref names a
-- PaymentIntent, created for exactly that share, in the currency's minor units. A join's
-- share is owed for PAYMENT_HOLD_SECONDS, its place held meanwhile (counted as taken): not
-- paid by then, the place is freed (match_shares_lapse), and a match is MATCHED only once
-- every place is taken and paid. The row is
-- PAID only on the provider's word: its signed event, or its answer when the organizer asks
-- it (confirm-payment); a payment of another amount or currency than the share is recorded
-- as an issue for an administrator and pays nothing. A payment that succeeds after its place
-- was freed is refunded in full. Every refund of such a row is paid back by the provider:
-- PENDING until the sweeper sent it and the provider said it succeeded, retried with a
-- backoff while the provider fails, FAILED (and an issue) when the provider says so.
-- Every event is applied once, by its id (payment_events); the states only move forward, so
-- the order events arrive in does not matter.
--
-- Uses: match_pay, match_pay_check, match_expire_holds, match_fill and payments_refund
-- (sql/areas/60_lifecycle.sql), match_offers_settle, match_offer_places and
-- match_handover_refill (sql/areas/65_places.sql). Feeds: match_join_locked and
-- match_offers_settle, cgi-bin/payments.c (the webhook), cgi-bin/requests.c and common/join.c
-- (create, the joins, confirm-payment), cron/sweep.c (the calls to the provider).

-- Decimal places of an ISO 4217 currency at the provider: Stripe's zero-decimal currencies
-- take whole units, its three-decimal ones thousandths; the rest hundredths.
CREATE OR REPLACE FUNCTION currency_exponent(p_currency text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN upper(p_currency) IN ('BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG',
                                   'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF') THEN 0
        WHEN upper(p_currency) IN ('BHD', 'JOD', 'KWD', 'OMR', 'TND') THEN 3
        ELSE 2 END
$$;
COMMENT ON FUNCTION currency_exponent(text) IS
    'Decimal places of a currency''s amounts at the payment provider (0, 2 or 3).';

-- An amount in the currency's minor units, as the provider counts it (12.50 EUR is 1250).
CREATE OR REPLACE FUNCTION payment_minor_units(p_amount numeric, p_currency text) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT round(p_amount * 10 ^ currency_exponent(p_currency))::bigint
$$;
COMMENT ON FUNCTION payment_minor_units(numeric, text) IS
    'An amount in the minor units of its currency (cents for EUR), as the provider takes it.';

-- How long a join's share may be owed: the transaction's setting courts.share_hold_seconds,
-- which the programs set when a payment provider takes the shares (common/join.c); NULL
-- without one: the share is paid at once, as the organizer's word pays the match.
CREATE OR REPLACE FUNCTION payment_share_hold() RETURNS interval
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT make_interval(secs => nullif(current_setting('courts.share_hold_seconds', true), '')::int)
$$;
COMMENT ON FUNCTION payment_share_hold() IS
    'How long a join''s share may be owed (courts.share_hold_seconds); NULL: paid at once.';

-- The joins of match p_match whose share is owed past its window: their places read as free
-- at once, before match_shares_lapse frees them (json_match_request).
CREATE OR REPLACE FUNCTION match_shares_lapsed(p_match uuid, p_now timestamptz DEFAULT now())
    RETURNS uuid[]
    LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN ARRAY(SELECT mp.id FROM payments p
                   JOIN match_players mp ON mp.id = p.entry_id AND mp.left_at IS NULL
                  WHERE p.match_request_id = p_match AND p.kind = 'PAYMENT'
                    AND p.status = 'PENDING' AND p.expires_at <= p_now);
END $$;
COMMENT ON FUNCTION match_shares_lapsed(uuid, timestamptz) IS
    'Joins of a match whose share is owed past its window (their places read as free).';

-- The joins of locked match p_match whose share was not paid within its window: each ends
-- UNPAID (its place free again, its pending payment cancelled by the trigger below, its
-- intent then by the sweeper), the player told PAYMENT_EXPIRED and the others PLAYER_LEFT,
-- and the freed places offered to the waiting list. match_offers_settle runs it first, so
-- every write of the match's places and the sweeper's rule of offers free them. Returns how
-- many were freed.
CREATE OR REPLACE FUNCTION match_shares_lapse(p_match uuid, p_now timestamptz)
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_players uuid[];
BEGIN
    WITH lapsed AS (
        UPDATE match_players mp SET left_at = p_now, left_reason = 'UNPAID'
          FROM payments p
         WHERE mp.match_request_id = p_match AND mp.left_at IS NULL
           AND p.entry_id = mp.id AND p.kind = 'PAYMENT' AND p.status = 'PENDING'
           AND p.expires_at <= p_now
        RETURNING mp.player_id)
    SELECT COALESCE(array_agg(player_id), '{}') INTO v_players FROM lapsed;
    IF cardinality(v_players) = 0 THEN
        RETURN 0;
    END IF;
    PERFORM notify(v_players, 'PAYMENT_EXPIRED', jsonb_build_object('matchRequestId', p_match),
                   p_now);
    INSERT INTO notifications (recipient_id, type, payload, created_at)
    SELECT a.player_id, 'PLAYER_LEFT',
           jsonb_build_object('matchRequestId', p_match, 'playerId', l.player_id), p_now
      FROM unnest(match_active_players(p_match)) a(player_id), unnest(v_players) l(player_id);
    PERFORM match_offer_places(p_match, p_now);
    RETURN cardinality(v_players);
END $$;
COMMENT ON FUNCTION match_shares_lapse(uuid, timestamptz) IS
    'Joins of a locked match whose share lapsed unpaid -> UNPAID, places offered on; returns how many.';

-- A join that ends (a leave, an absence, a lapse) while its share is owed owes it no more:
-- the pending payment is CANCELLED, and its PaymentIntent cancelled by the sweeper.
CREATE OR REPLACE FUNCTION payments_share_cancel() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE payments
       SET status = 'CANCELLED', updated_at = NEW.left_at,
           next_attempt_at = CASE WHEN provider_ref IS NOT NULL THEN NEW.left_at END
     WHERE entry_id = NEW.id AND kind = 'PAYMENT' AND status = 'PENDING';
    RETURN NULL;
END $$;
COMMENT ON FUNCTION payments_share_cancel() IS
    'Trigger: the pending share of a join that ends is cancelled.';

CREATE OR REPLACE TRIGGER match_players_share_cancel AFTER UPDATE OF left_at ON match_players
    FOR EACH ROW WHEN (OLD.left_at IS NULL AND NEW.left_at IS NOT NULL)
    EXECUTE FUNCTION payments_share_cancel();

-- The share p_player owes in match p_match and has no PaymentIntent for yet: the row (its id
-- is the intent's idempotency key), the amount in minor units and the currency, lower-case as
-- the provider writes it. No row when there is none (a free share, or one paid).
CREATE OR REPLACE FUNCTION payment_intent_wanted(p_match uuid, p_player uuid)
    RETURNS TABLE (payment_id uuid, minor bigint, currency text)
    LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT p.id, payment_minor_units(p.amount, p.currency), lower(p.currency)
      FROM match_players mp
      JOIN payments p ON p.entry_id = mp.id AND p.kind = 'PAYMENT'
     WHERE mp.match_request_id = p_match AND mp.player_id = p_player AND mp.left_at IS NULL
       AND p.status = 'PENDING' AND p.provider_ref IS NULL AND p.amount > 0;
END $$;
COMMENT ON FUNCTION payment_intent_wanted(uuid, uuid) IS
    'The caller''s pending share of a match that needs a PaymentIntent: row, minor units, currency.';

-- Records the PaymentIntent the provider created for payment row p_payment.
CREATE OR REPLACE FUNCTION payment_intent_record(p_payment uuid, p_provider text, p_ref text,
                                                 p_client_secret text, p_status text)
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE payments
       SET provider = p_provider, provider_ref = p_ref, client_secret = p_client_secret,
           provider_status = p_status
     WHERE id = p_payment AND kind = 'PAYMENT' AND status = 'PENDING';
END $$;
COMMENT ON FUNCTION payment_intent_record(uuid, text, text, text, text) IS
    'Names the provider''s PaymentIntent of a pending share, with its client secret.';

-- confirm-payment with a provider: PAY's refusals first (404, 403 NOT_ORGANIZER, 409
-- PAYMENT_WINDOW_PASSED, INVALID_STATE), then the organizer's PaymentIntent to ask the
-- provider about (409 PAYMENT_NOT_RECEIVED when the share has none: its creation failed).
-- The match stays locked while the provider is asked: its word is applied to it as it is.
CREATE OR REPLACE FUNCTION payment_to_confirm(p_match uuid, p_player uuid,
                                              p_now timestamptz DEFAULT now())
    RETURNS text
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
    v_ref text;
BEGIN
    PERFORM match_pay_check(m, p_player, p_now);
    SELECT p.provider_ref INTO v_ref
      FROM match_players mp
      JOIN payments p ON p.entry_id = mp.id AND p.kind = 'PAYMENT' AND p.status = 'PENDING'
     WHERE mp.match_request_id = p_match AND mp.player_id = p_player AND mp.left_at IS NULL;
    IF v_ref IS NULL THEN
        PERFORM lifecycle_fail(409, 'PAYMENT_NOT_RECEIVED',
            'The payment provider has no payment for this match.');
    END IF;
    RETURN v_ref;
END $$;
COMMENT ON FUNCTION payment_to_confirm(uuid, uuid, timestamptz) IS
    'The checks of confirm-payment and the organizer''s PaymentIntent to ask the provider about.';

-- Applies what the provider says of PaymentIntent p_ref: its status, and for a succeeded one
-- the amount received and its currency. Returns what it did:
--   PAID             the share is paid: the organizer's opens the match (PAY), a join's
--                    may fill it (MATCHED once every place is paid)
--   ALREADY_PAID     it was, by an earlier word of the provider
--   AMOUNT_MISMATCH  money of another amount or currency: an issue, the share stays PENDING
--   LATE_PAYMENT     the place was freed before the money came: PAID and refunded in full
--   RECORDED         a status that pays nothing (failed, cancelled, waiting for the payer)
--   UNKNOWN          no share has this intent
CREATE OR REPLACE FUNCTION payment_intent_apply(p_provider text, p_ref text, p_status text,
                                                p_received bigint, p_currency text,
                                                p_min_reliability integer,
                                                p_now timestamptz DEFAULT now())
    RETURNS text
    LANGUAGE plpgsql
AS $$
DECLARE
    p payments;
    m match_requests;
BEGIN
    -- the match first, then the row, in the order every transition of the match locks them
    SELECT * INTO p FROM payments
     WHERE provider = p_provider AND provider_ref = p_ref AND kind = 'PAYMENT';
    IF NOT FOUND THEN
        RETURN 'UNKNOWN';
    END IF;
    SELECT * INTO m FROM match_requests WHERE id = p.match_request_id FOR UPDATE;
    SELECT * INTO p FROM payments WHERE id = p.id FOR UPDATE;
    IF p_status <> 'succeeded' THEN
        -- a succeeded or cancelled intent stays so (both are final at the provider): a late
        -- event of an earlier state changes nothing
        UPDATE payments SET provider_status = p_status
         WHERE id = p.id AND provider_status IS DISTINCT FROM 'succeeded'
           AND provider_status IS DISTINCT FROM 'canceled';
        RETURN 'RECORDED';
    END IF;
    IF p.status = 'PAID' THEN
        RETURN 'ALREADY_PAID';
    END IF;
    IF p_received IS DISTINCT FROM payment_minor_units(p.amount, p.currency)
       OR lower(p_currency) IS DISTINCT FROM lower(p.currency) THEN
        INSERT INTO payment_issues (payment_id, kind, detail, created_at)
        SELECT p.id, 'AMOUNT_MISMATCH',
               jsonb_build_object('providerRef', p_ref,
                                  'received', p_received, 'receivedCurrency', p_currency,
                                  'expected', payment_minor_units(p.amount, p.currency),
                                  'expectedCurrency', lower(p.currency)), p_now
         WHERE NOT EXISTS (SELECT 1 FROM payment_issues i
                            WHERE i.payment_id = p.id AND i.kind = 'AMOUNT_MISMATCH');
        -- a share no longer owed whose intent the sweeper was to cancel: it cannot be
        -- cancelled now that it succeeded, and the issue says what the provider holds
        UPDATE payments SET provider_status = p_status, client_secret = NULL,
                            next_attempt_at = NULL
         WHERE id = p.id AND status = 'CANCELLED';
        RETURN 'AMOUNT_MISMATCH';
    END IF;
    UPDATE payments SET provider_status = p_status WHERE id = p.id;
    IF p.status = 'PENDING' AND m.status = 'PENDING_PAYMENT' AND m.organizer_id = p.player_id THEN
        IF m.expires_at > p_now THEN
            PERFORM match_pay(m.id, p.player_id, p_min_reliability, p_now);
            UPDATE payments SET client_secret = NULL WHERE id = p.id;
            RETURN 'PAID';
        END IF;
        -- the hold lapsed before the money came: it ends now, and the payment is late
        PERFORM match_expire_holds(ARRAY[m.id], p_now);
    ELSIF p.status = 'PENDING' AND p.expires_at > p_now THEN
        -- a join's share in time: paid; the place refills a hand-over, and may fill the match
        UPDATE payments SET status = 'PAID', client_secret = NULL, updated_at = p_now
         WHERE id = p.id;
        PERFORM match_handover_refill(m.id, p.player_id, mp.team, mp.id, p_now)
           FROM match_players mp WHERE mp.id = p.entry_id;
        PERFORM match_fill(m.id, p_now);
        RETURN 'PAID';
    ELSIF p.status = 'PENDING' THEN
        -- a join's share past its window: its place is freed now, and the payment is late
        PERFORM match_offers_settle(m.id, p_now);
    END IF;
    -- money for a place that is no longer held: taken, and given back in full
    UPDATE payments SET status = 'PAID', client_secret = NULL, next_attempt_at = NULL,
                        updated_at = p_now
     WHERE id = p.id;
    PERFORM payments_refund(ARRAY[p.id], p_now);
    RETURN 'LATE_PAYMENT';
END $$;
COMMENT ON FUNCTION payment_intent_apply(text, text, text, bigint, text, integer, timestamptz) IS
    'Applies the provider''s status of a PaymentIntent to its share; returns the outcome.';

-- Applies what the provider says of refund p_ref of refund row p_refund (the row the sweeper
-- sent, or the one an event's metadata names: an event may come before the sweeper has the
-- answer) or, without p_refund, of the row that records p_ref: succeeded -> REFUNDED; failed
-- or canceled -> FAILED, with an issue for an administrator; any other status leaves it
-- PENDING, waiting for the provider. Terminal states stay. Returns REFUNDED, REFUND_FAILED,
-- RECORDED or UNKNOWN.
CREATE OR REPLACE FUNCTION payment_refund_apply(p_provider text, p_refund uuid, p_ref text,
                                                p_status text, p_reason text,
                                                p_now timestamptz DEFAULT now())
    RETURNS text
    LANGUAGE plpgsql
AS $$
DECLARE
    r payments;
BEGIN
    SELECT * INTO r FROM payments
     WHERE kind = 'REFUND' AND provider = p_provider
       AND CASE WHEN p_refund IS NOT NULL THEN id = p_refund ELSE provider_ref = p_ref END
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'UNKNOWN';
    END IF;
    UPDATE payments SET provider_ref = COALESCE(provider_ref, p_ref) WHERE id = r.id;
    IF r.status <> 'PENDING' THEN
        RETURN 'RECORDED';
    END IF;
    IF p_status = 'succeeded' THEN
        UPDATE payments SET status = 'REFUNDED', provider_status = p_status, updated_at = p_now,
                            next_attempt_at = NULL, last_error = NULL
         WHERE id = r.id;
        RETURN 'REFUNDED';
    END IF;
    IF p_status IN ('failed', 'canceled') THEN
        UPDATE payments SET status = 'FAILED', provider_status = p_status, updated_at = p_now,
                            next_attempt_at = NULL, last_error = p_reason
         WHERE id = r.id;
        INSERT INTO payment_issues (payment_id, kind, detail, created_at)
        VALUES (r.id, 'REFUND_FAILED',
                jsonb_build_object('providerRef', p_ref, 'status', p_status,
                                   'reason', p_reason), p_now);
        RETURN 'REFUND_FAILED';
    END IF;
    -- sent, not settled yet: the provider's event settles it (or a reconciliation)
    UPDATE payments SET provider_status = p_status, next_attempt_at = NULL WHERE id = r.id;
    RETURN 'RECORDED';
END $$;
COMMENT ON FUNCTION payment_refund_apply(text, uuid, text, text, text, timestamptz) IS
    'Applies the provider''s status of a refund to its row (REFUNDED, FAILED); returns the outcome.';

-- Applies event p_id of the provider once: a second delivery of the same id is DUPLICATE and
-- changes nothing. p_object and p_status are the event's object and its status; p_ledger
-- the ledger row its metadata names (refund_id of a refund); p_amount/p_currency its amount
-- received (a PaymentIntent); p_reason a refund's failure_reason. Types it does not handle
-- are IGNORED, and recorded as such.
CREATE OR REPLACE FUNCTION payment_event_apply(p_provider text, p_id text, p_type text,
                                               p_object text, p_ledger uuid, p_status text,
                                               p_amount bigint, p_currency text, p_reason text,
                                               p_min_reliability integer,
                                               p_now timestamptz DEFAULT now())
    RETURNS text
    LANGUAGE plpgsql
AS $$
DECLARE
    v_outcome text;
BEGIN
    INSERT INTO payment_events (id, provider, type, object_id, outcome, received_at)
    VALUES (p_id, p_provider, p_type, p_object, 'IGNORED', p_now)
    ON CONFLICT (id) DO NOTHING;
    IF NOT FOUND THEN
        RETURN 'DUPLICATE';
    END IF;
    v_outcome := CASE
        WHEN p_type IN ('payment_intent.succeeded', 'payment_intent.payment_failed',
                        'payment_intent.canceled', 'payment_intent.processing',
                        'payment_intent.requires_action') THEN
            payment_intent_apply(p_provider, p_object, p_status, p_amount, p_currency,
                                 p_min_reliability, p_now)
        WHEN p_type IN ('refund.created', 'refund.updated', 'refund.failed') THEN
            payment_refund_apply(p_provider, p_ledger, p_object, p_status, p_reason, p_now)
        ELSE 'IGNORED' END;
    -- money the provider took that no share of the ledger asked for
    IF v_outcome = 'UNKNOWN' AND p_type = 'payment_intent.succeeded' THEN
        INSERT INTO payment_issues (kind, detail, created_at)
        VALUES ('UNKNOWN_CHARGE',
                jsonb_build_object('providerRef', p_object, 'event', p_id,
                                   'received', p_amount, 'receivedCurrency', p_currency), p_now);
    END IF;
    UPDATE payment_events e
       SET outcome = v_outcome,
           payment_id = (SELECT p.id FROM payments p
                          WHERE p.provider = p_provider AND p.provider_ref = p_object)
     WHERE e.id = p_id;
    RETURN v_outcome;
END $$;
COMMENT ON FUNCTION payment_event_apply(text, text, text, text, uuid, text, bigint, text, text,
                                        integer, timestamptz) IS
    'Applies one event of the payment provider, once by its id; returns the outcome.';

-- The sweeper's calls to the provider: at most p_limit rows due, claimed for the call: each
-- is leased for five minutes (next_attempt_at moves on) in a transaction the sweeper commits
-- before it calls, so that no row is locked while the provider answers (its events, which
-- may come before its answer, must find the row free), and two sweepers never make the same
-- call. Refunds to send (kind REFUND, with the PaymentIntent they give back from and the
-- amount in minor units), and the PaymentIntents of shares cancelled while pending (kind
-- PAYMENT), to cancel there. A lease that ends with no word (a sweeper killed mid-call) makes
-- the row due again: the call is made again, under the same idempotency key.
CREATE OR REPLACE FUNCTION payments_due(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (id uuid, kind text, provider text, intent text, minor bigint)
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH due AS (
        SELECT d.id FROM payments d
         WHERE d.provider IS NOT NULL AND d.next_attempt_at <= p_now
           AND ((d.kind = 'REFUND' AND d.status = 'PENDING')
                OR (d.kind = 'PAYMENT' AND d.status = 'CANCELLED'
                    AND d.provider_status IS DISTINCT FROM 'canceled'))
         ORDER BY d.next_attempt_at
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED),
    leased AS (
        UPDATE payments x SET next_attempt_at = p_now + interval '5 minutes',
                              attempts = x.attempts + 1
          FROM due WHERE x.id = due.id
        RETURNING x.id, x.kind, x.provider, x.provider_ref, x.refund_of, x.amount, x.currency)
    SELECT l.id, l.kind, l.provider,
           CASE WHEN l.kind = 'REFUND' THEN o.provider_ref ELSE l.provider_ref END,
           payment_minor_units(l.amount, l.currency)
      FROM leased l
      LEFT JOIN payments o ON o.id = l.refund_of;
END $$;
COMMENT ON FUNCTION payments_due(integer, timestamptz) IS
    'Leases the sweeper''s due calls to the payment provider: refunds to send, intents to cancel.';

-- A call of the sweeper for row p_id that got no usable answer (the provider down, slow or
-- failing): tried again after 30 s, doubling with each failure up to an hour.
CREATE OR REPLACE FUNCTION payment_call_failed(p_id uuid, p_error text,
                                               p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE payments
       SET last_error = p_error,
           next_attempt_at = p_now + least(interval '30 seconds' * 2 ^ least(attempts - 1, 7),
                                           interval '1 hour')
     WHERE id = p_id;
END $$;
COMMENT ON FUNCTION payment_call_failed(uuid, text, timestamptz) IS
    'Retries a failed call to the provider later: 30 s, doubling up to an hour.';

-- The PaymentIntent of cancelled share p_id is cancelled at the provider (or was already).
CREATE OR REPLACE FUNCTION payment_intent_cancelled(p_id uuid) RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE payments
       SET provider_status = 'canceled', client_secret = NULL, next_attempt_at = NULL,
           last_error = NULL
     WHERE id = p_id;
END $$;
COMMENT ON FUNCTION payment_intent_cancelled(uuid) IS
    'Records that the provider cancelled the PaymentIntent of a cancelled share.';

-- The differences between the ledger and the provider's books that nobody has settled yet,
-- oldest first, a line each, as `make reconcile` prints them.
CREATE OR REPLACE FUNCTION payment_issues_open()
    RETURNS TABLE (kind text, line text)
    LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT i.kind,
           CASE i.kind
               WHEN 'UNKNOWN_CHARGE' THEN
                   format('%s took %s %s that no share of the ledger asked for (event %s)',
                          i.detail->>'providerRef', i.detail->>'received',
                          i.detail->>'receivedCurrency', i.detail->>'event')
               WHEN 'AMOUNT_MISMATCH' THEN
                   format('%s brought %s %s for payment %s, whose share is %s %s',
                          i.detail->>'providerRef', i.detail->>'received',
                          i.detail->>'receivedCurrency', i.payment_id,
                          i.detail->>'expected', i.detail->>'expectedCurrency')
               ELSE
                   format('refund %s of %s %s was refused by the provider (%s): pay it back by other means',
                          i.payment_id, p.amount, p.currency,
                          COALESCE(i.detail->>'reason', i.detail->>'status'))
           END
      FROM payment_issues i
      LEFT JOIN payments p ON p.id = i.payment_id
     WHERE i.resolved_at IS NULL
     ORDER BY i.created_at, i.id;
END $$;
COMMENT ON FUNCTION payment_issues_open() IS
    'The unsettled differences between the ledger and the provider, a line each, oldest first.';

-- An administrator settles the open issues of ledger row p_payment (a refund paid back by
-- other means, money returned at the provider's dashboard), saying what was done: they are
-- no longer differences. 404 NOT_FOUND for an unknown row; 409 NO_OPEN_ISSUE when it has
-- none open. Returns how many were settled.
CREATE OR REPLACE FUNCTION payment_issues_resolve(p_payment uuid, p_admin uuid, p_note text,
                                                  p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_count integer;
BEGIN
    PERFORM 1 FROM payments WHERE id = p_payment FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Payment not found.');
    END IF;
    UPDATE payment_issues SET resolved_at = p_now, resolved_by = p_admin, resolution = p_note
     WHERE payment_id = p_payment AND resolved_at IS NULL;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count = 0 THEN
        PERFORM lifecycle_fail(409, 'NO_OPEN_ISSUE', 'This payment has no open issue to settle.');
    END IF;
    RETURN v_count;
END $$;
COMMENT ON FUNCTION payment_issues_resolve(uuid, uuid, text, timestamptz) IS
    'An administrator settles the open issues of a ledger row, saying what was done.';
