// A stand-in for the Stripe API, for the tests of the service's payments:
//   node tests/stripe-stand-in.mjs DIR
// listens on 127.0.0.1 (a port of the system's choosing, written to DIR/port once listening)
// and answers the part of the API the service uses as Stripe documents it: form-encoded
// requests, JSON answers (pretty, as Stripe's), Stripe's ids, objects, list objects, errors
// and statuses, idempotent requests, and events sent to a webhook, signed with the official
// package's stripe.webhooks.generateTestHeaderString.
//
// Read at each request (a file may be absent: the default in brackets):
//   DIR/secret-key      the key each /v1 request carries, as Bearer or as Basic user [sk_test_standin]
//   DIR/webhook-url     where events are POSTed [none: events are kept, not sent]
//   DIR/webhook-secret  the secret events are signed with [whsec_standin]
//   DIR/mode            ok | down (500 api_error, nothing done) | stall (nothing done, no
//                       answer: the socket is closed after 60 s) | slow (the request done at
//                       once, its answer sent 2 s after it came) [ok]
//   DIR/refund-mode     succeeded | pending (until /_stand-in/refunds/ID/settle) | failed
//                       (created pending, then failed with failure_reason declined) [succeeded]
//   DIR/deliver         yes | no (events are kept and listed, not sent: a lost webhook) [yes]
// Written: DIR/requests.jsonl, one line per /v1 request {method, path, query, idempotencyKey,
// authOk, params} (query and params decoded into nested objects, as Stripe reads them), and
// DIR/deliveries.jsonl, one line per webhook POST {eventId, type, status} (the receiver's
// status, 0 for none within 10 s), and DIR/timings, one line per /v1 request answered: the
// milliseconds from its body read to its answer written (make bench shows them apart).
//
// The API:
//   POST /v1/payment_intents               payment_intent.created
//   GET  /v1/payment_intents/ID
//   POST /v1/payment_intents/ID/cancel     payment_intent.canceled
//   POST /v1/refunds                       refund.created, charge.refunded
//   GET  /v1/refunds/ID
//   GET  /v1/events                        (limit, starting_after, ending_before, type, types, created)
//   GET  /v1/events/ID
// Test-only routes (no key, answered at once whatever DIR/mode says):
//   POST /_stand-in/payment_intents/ID/pay[?amount=N&currency=C]
//        the customer's card is confirmed (for N in C, default the intent's own):
//        charge.succeeded, payment_intent.succeeded; 409 for a canceled or succeeded intent
//   POST /_stand-in/payment_intents/ID/fail
//        the card is declined: charge.failed, payment_intent.payment_failed
//   POST /_stand-in/refunds/ID/settle[?status=succeeded|failed]
//        a pending refund settles: refund.updated (and refund.failed)
//   POST /_stand-in/events/ID/resend       the event POSTed again; answers {status}
//   POST /_stand-in/deliver[?order=created|reverse]
//        every event no webhook POST took (held, or answered other than 2xx) is sent, in that
//        order; answers [{eventId, status}]
//   GET  /_stand-in/state                  {payment_intents, refunds, charges, events}
//   POST /_stand-in/reset                  everything forgotten, as a new account's books
// A POST with an Idempotency-Key seen before answers the first status and body again
// (Idempotent-Replayed: true) for the same endpoint and parameters, and is an idempotency_error
// otherwise; a refusal of invalid parameters, a 401 and a 500 of mode down are not kept.
// Webhooks are sent one at a time, in the order the events were made, and an answer (of the
// API or of a test-only route) waits for the deliveries of the events it made.
// Simpler than Stripe: one account and one webhook endpoint, no retries of a failed webhook
// but the deliver route's, parameters Stripe documents but the stand-in does not act on
// (confirm, customer, ...) taken and ignored, minimum amounts for the common currencies only.
// Nothing is written to stdout or stderr while things go right. Stopped by its PID.
import { createServer, request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// the official package next to this file, wherever the file is and whatever the working
// directory
const require = createRequire(import.meta.url);
const Stripe = require(fileURLToPath(new URL('./node_modules/stripe', import.meta.url)));

const [dir] = process.argv.slice(2);
if (!dir) {
	process.stderr.write('usage: node stripe-stand-in.mjs DIR\n');
	process.exit(2);
}

// the version events are rendered in: the official package's own (refund.* events are sent
// for card refunds from 2024-10-28.acacia on)
const API_VERSION = Stripe.API_VERSION;
const RECEIVER_TIMEOUT_MS = 10000;
const STALL_MS = 60000;
const SLOW_MS = 2000;

// ---- settings, ids, times ------------------------------------------------------------------

function setting(name, fallback) {
	try {
		return readFileSync(`${dir}/${name}`, 'utf8').trim() || fallback;
	} catch {
		return fallback;
	}
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function random(n) {
	let s = '';
	for (const b of randomBytes(n))
		s += ALNUM[b % ALNUM.length];
	return s;
}
const newId = (prefix) => `${prefix}_${random(24)}`;
const newRequestId = () => `req_${random(14)}`;
const now = () => Math.floor(Date.now() / 1000);
const sleep = (ms) => new Promise((done) => setTimeout(done, Math.max(0, ms)));
const snapshot = (o) => JSON.parse(JSON.stringify(o));
const pretty = (o) => JSON.stringify(o, null, 2);

// ---- money -----------------------------------------------------------------------------------

// the currencies Stripe counts without minor units, and those with three decimals
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf',
	'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
const THREE_DECIMAL = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);
// the smallest charge of Stripe's table of minimum amounts, in minor units, for the common ones
const MINIMUM = { usd: 50, eur: 50, gbp: 30, chf: 50, cad: 50, aud: 50, nzd: 50, sgd: 50, jpy: 50,
	dkk: 250, nok: 300, sek: 300, pln: 200, czk: 1500, huf: 17500, mxn: 1000, brl: 50, hkd: 400,
	aed: 200, ron: 200, bgn: 100, inr: 50, myr: 200, thb: 1000 };
const MAXIMUM = 99999999;

function money(amount, currency) {
	const digits = ZERO_DECIMAL.has(currency) ? 0 : THREE_DECIMAL.has(currency) ? 3 : 2;
	try {
		return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase(),
			minimumFractionDigits: digits, maximumFractionDigits: digits }).format(amount / 10 ** digits);
	} catch {
		return `${(amount / 10 ** digits).toFixed(digits)} ${currency}`;
	}
}

// ---- form bodies and query strings -----------------------------------------------------------

function decodeComponent(s) {
	try {
		return decodeURIComponent(s.replace(/\+/g, ' '));
	} catch {
		return s;
	}
}

// a=1&b[c]=2&d[]=x&d[]=y&e[0]=z into {a: '1', b: {c: '2'}, d: ['x', 'y'], e: ['z']}; the keys of
// metadata stay keys, even when they are numbers
function decodeForm(text) {
	const root = {};
	for (const part of (text || '').split('&')) {
		if (part === '')
			continue;
		const eq = part.indexOf('=');
		const key = decodeComponent(eq < 0 ? part : part.slice(0, eq));
		const value = decodeComponent(eq < 0 ? '' : part.slice(eq + 1));
		const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
		const path = m ? [m[1], ...[...m[2].matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1])] : [key];
		let node = root;
		for (let i = 0; i < path.length; i++) {
			let k = path[i];
			if (k === '')
				k = String(Object.keys(node).length);
			if (i === path.length - 1) {
				Object.defineProperty(node, k, { value, enumerable: true, writable: true, configurable: true });
			} else {
				if (typeof node[k] !== 'object' || node[k] === null || !Object.hasOwn(node, k))
					Object.defineProperty(node, k, { value: {}, enumerable: true, writable: true, configurable: true });
				node = node[k];
			}
		}
	}
	return arrays(root, '');
}

// objects whose keys are 0, 1, ... n-1 become arrays (not metadata's)
function arrays(node, name) {
	if (typeof node !== 'object' || node === null)
		return node;
	for (const k of Object.keys(node))
		node[k] = arrays(node[k], k);
	const keys = Object.keys(node);
	if (name !== 'metadata' && keys.length > 0 && keys.every((k, i) => k === String(i)))
		return keys.map((k) => node[k]);
	return node;
}

// JSON with the keys of every object in order: parameters compared whatever their order
function canonical(v) {
	if (Array.isArray(v))
		return `[${v.map(canonical).join(',')}]`;
	if (typeof v === 'object' && v !== null)
		return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
	return JSON.stringify(v);
}

// ---- errors ----------------------------------------------------------------------------------

// an error answer; stored=false for the refusals made before an endpoint runs (invalid
// parameters), which Stripe does not keep under an idempotency key
class StripeFailure extends Error {
	constructor(status, error, stored = true) {
		super(error.message);
		this.status = status;
		this.error = error;
		this.stored = stored;
	}
}

const invalid = (message, extra = {}, status = 400, stored = true) =>
	new StripeFailure(status, { type: 'invalid_request_error', message, ...extra }, stored);
const badParam = (message, param, code) =>
	invalid(message, code ? { code, param } : { param }, 400, false);
const missing = (what, id, param) =>
	invalid(`No such ${what}: '${id}'`, { code: 'resource_missing', param }, 404);

// Stripe's error body: its fields in alphabetical order, a doc_url for a code, and the
// request's log in the Dashboard
function errorBody(error, requestId) {
	const e = { ...error };
	if (e.code && !e.doc_url)
		e.doc_url = `https://stripe.com/docs/error-codes/${e.code.replace(/_/g, '-')}`;
	if (e.type !== 'api_error')
		e.request_log_url = `https://dashboard.stripe.com/test/logs/${requestId}?t=${now()}`;
	const sorted = {};
	for (const k of Object.keys(e).sort())
		sorted[k] = e[k];
	return { error: sorted };
}

// ---- parameters ------------------------------------------------------------------------------

function allow(params, names, prefix = '') {
	if (typeof params !== 'object' || params === null || Array.isArray(params))
		return;
	for (const k of Object.keys(params)) {
		if (!names.includes(k)) {
			const name = prefix ? `${prefix}[${k}]` : k;
			throw badParam(`Received unknown parameter: ${name}`, name, 'parameter_unknown');
		}
	}
}

function text(params, name, { required = false } = {}) {
	const v = params[name];
	if (v === undefined) {
		if (required)
			throw badParam(`Missing required param: ${name}.`, name, 'parameter_missing');
		return undefined;
	}
	if (typeof v !== 'string')
		throw badParam(`Invalid string: ${name} must be a string.`, name);
	return v;
}

function integer(params, name, { required = false, min = null, max = null } = {}) {
	const v = text(params, name, { required });
	if (v === undefined)
		return undefined;
	if (v === '') {
		if (required)
			throw badParam(`Missing required param: ${name}.`, name, 'parameter_missing');
		return undefined;
	}
	if (!/^-?\d+$/.test(v))
		throw badParam(`Invalid integer: ${v}`, name, 'parameter_invalid_integer');
	const n = Number(v);
	if (min !== null && n < min)
		throw badParam(`This value must be greater than or equal to ${min}.`, name, 'parameter_invalid_integer');
	if (max !== null && n > max)
		throw badParam(`This value must be less than or equal to ${max}.`, name, 'parameter_invalid_integer');
	return n;
}

function oneOf(params, name, values) {
	const v = text(params, name);
	if (v === undefined || v === '')
		return undefined;
	if (!values.includes(v)) {
		const list = values.length > 1 ? `${values.slice(0, -1).join(', ')}, or ${values.at(-1)}` : values[0];
		throw badParam(`Invalid ${name}: must be one of ${list}`, name);
	}
	return v;
}

function boolean(params, name, prefix) {
	const v = params[name];
	if (v === undefined)
		return undefined;
	if (v !== 'true' && v !== 'false')
		throw badParam(`Invalid boolean: ${v}`, prefix ? `${prefix}[${name}]` : name);
	return v === 'true';
}

function currencyParam(params) {
	const v = text(params, 'currency', { required: true });
	if (v === '')
		throw badParam('Missing required param: currency.', 'currency', 'parameter_missing');
	// Stripe's documentation: the ISO code in lowercase letters
	if (!/^[a-z]{3}$/.test(v))
		throw badParam(`Invalid currency: ${v}. Stripe currently supports three-letter ISO currency codes, in lowercase.`,
			'currency');
	return v;
}

// metadata[key]=value pairs; an empty value drops the key, an empty metadata drops all
function metadataParam(params, base = {}) {
	const v = params.metadata;
	if (v === undefined)
		return { ...base };
	if (v === '')
		return {};
	if (typeof v !== 'object' || Array.isArray(v))
		throw badParam('Invalid object', 'metadata');
	const out = { ...base };
	for (const [k, value] of Object.entries(v)) {
		if (typeof value !== 'string')
			throw badParam('Invalid metadata: values are strings.', `metadata[${k}]`);
		if (k.length > 40)
			throw badParam(`Metadata keys can have up to 40 characters, but you passed in a key of ${k.length} characters: ${k}`,
				`metadata[${k}]`);
		if (value.length > 500)
			throw badParam(`Metadata values can have up to 500 characters, but you passed in a value of ${value.length} characters.`,
				`metadata[${k}]`);
		if (value === '')
			delete out[k];
		else
			out[k] = value;
	}
	if (Object.keys(out).length > 50)
		throw badParam('You can have up to 50 metadata keys.', 'metadata');
	return out;
}

function expandParam(params) {
	const v = params.expand;
	if (v === undefined)
		return [];
	if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
		throw badParam('Invalid array', 'expand');
	return v;
}

// ---- state -----------------------------------------------------------------------------------

const intents = new Map();
const charges = new Map();
const refunds = new Map();
const events = [];	// in the order they were made
const eventsById = new Map();
const sent = new Map();	// event id -> {attempts, ok}: what its webhook POSTs got
const idempotent = new Map();	// API key + '\n' + Idempotency-Key -> the first answer

function byPrefix(id) {
	if (typeof id !== 'string')
		return undefined;
	if (id.startsWith('pi_'))
		return intents.get(id);
	if (id.startsWith('ch_'))
		return charges.get(id);
	if (id.startsWith('re_'))
		return refunds.get(id);
	return undefined;
}

// expand[]=latest_charge, expand[]=data.payment_intent, expand[]=charge.payment_intent: each
// named id replaced by its object, as it is now
function expand(object, paths) {
	const out = snapshot(object);
	for (const path of paths) {
		const parts = path.split('.');
		let targets = [out];
		for (let i = 0; i < parts.length; i++) {
			const p = parts[i];
			const next = [];
			for (const t of targets) {
				if (t === null || typeof t !== 'object' || !(p in t))
					throw badParam(`This property cannot be expanded (${parts.slice(0, i + 1).join('.')}).`, 'expand');
				if (Array.isArray(t[p])) {
					next.push(...t[p]);
				} else if (typeof t[p] === 'string') {
					const found = byPrefix(t[p]);
					if (!found)
						throw badParam(`This property cannot be expanded (${parts.slice(0, i + 1).join('.')}).`, 'expand');
					t[p] = snapshot(found);
					next.push(t[p]);
				} else {
					next.push(t[p]);
				}
			}
			targets = next;
		}
	}
	return out;
}

// ---- webhooks --------------------------------------------------------------------------------

let chain = Promise.resolve();

// the event's POST, after every one queued before it; resolves to {eventId, status}, or null
// for an event held (no webhook URL, or DIR/deliver says no) when forced is false
function enqueue(event, forced) {
	const p = chain.then(() => deliver(event, forced));
	chain = p.catch(() => {});
	return p;
}

async function deliver(event, forced) {
	const url = setting('webhook-url', '');
	if (!forced && (url === '' || setting('deliver', 'yes') === 'no'))
		return null;
	let status = 0;
	if (url !== '') {
		const payload = pretty(event);
		const header = Stripe.webhooks.generateTestHeaderString({
			payload, secret: setting('webhook-secret', 'whsec_standin'),
		});
		status = await post(url, payload, header);
	}
	const s = sent.get(event.id);
	s.attempts++;
	if (status >= 200 && status < 300 && !s.ok) {
		s.ok = true;
		event.pending_webhooks = Math.max(0, event.pending_webhooks - 1);
	}
	appendFileSync(`${dir}/deliveries.jsonl`, JSON.stringify({ eventId: event.id, type: event.type, status }) + '\n');
	return { eventId: event.id, status };
}

// POSTs the body as Stripe does; resolves to the receiver's status, 0 for none in time
function post(url, payload, signature) {
	return new Promise((done) => {
		let finished = false;
		const finish = (status) => {
			if (!finished) {
				finished = true;
				clearTimeout(timer);
				done(status);
			}
		};
		let req;
		try {
			req = httpRequest(url, {
				method: 'POST',
				agent: false,
				headers: {
					'Content-Type': 'application/json; charset=utf-8',
					'Content-Length': Buffer.byteLength(payload),
					'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
					'Accept': '*/*; q=0.5, application/xml',
					'Cache-Control': 'no-cache',
					'Stripe-Signature': signature,
				},
			}, (res) => {
				res.on('data', () => {});
				res.on('end', () => finish(res.statusCode));
				res.on('error', () => finish(res.statusCode));
			});
		} catch {
			setImmediate(() => finish(0));
			return;
		}
		const timer = setTimeout(() => {
			finish(0);
			req.destroy();
		}, RECEIVER_TIMEOUT_MS);
		req.on('error', () => finish(0));
		req.end(payload);
	});
}

// a new event of the object as it is now, queued for its webhook; the caller waits for
// ctx.deliveries before it answers
function emit(ctx, type, object, previous) {
	const event = {
		id: newId('evt'),
		object: 'event',
		api_version: API_VERSION,
		created: now(),
		data: previous ? { object: snapshot(object), previous_attributes: previous } : { object: snapshot(object) },
		livemode: false,
		pending_webhooks: setting('webhook-url', '') === '' ? 0 : 1,
		request: { id: ctx.requestId ?? null, idempotency_key: ctx.idempotencyKey ?? null },
		type,
	};
	events.push(event);
	eventsById.set(event.id, event);
	sent.set(event.id, { attempts: 0, ok: false });
	ctx.deliveries.push(enqueue(event, false));
	return event;
}

// ---- objects ---------------------------------------------------------------------------------

function newIntent(p) {
	const id = newId('pi');
	const methods = p.payment_method_types;
	const apm = p.automatic_payment_methods;
	let automatic = null;
	if (apm !== undefined) {
		automatic = { enabled: apm.enabled };
		if (apm.allow_redirects !== undefined)
			automatic = { allow_redirects: apm.allow_redirects, enabled: apm.enabled };
	} else if (methods === undefined) {
		// the API's default since 2023-08-16: the payment methods of the Dashboard
		automatic = { enabled: true };
	}
	return {
		id,
		object: 'payment_intent',
		allowed_payment_method_types: null,
		amount: p.amount,
		amount_capturable: 0,
		amount_details: { tip: {} },
		amount_received: 0,
		application: null,
		application_fee_amount: null,
		automatic_payment_methods: automatic,
		canceled_at: null,
		cancellation_reason: null,
		capture_method: p.capture_method ?? 'automatic',
		client_secret: `${id}_secret_${random(25)}`,
		confirmation_method: p.confirmation_method ?? 'automatic',
		created: now(),
		currency: p.currency,
		customer: null,
		customer_account: null,
		description: p.description ?? null,
		excluded_payment_method_types: null,
		last_payment_error: null,
		latest_charge: null,
		livemode: false,
		managed_payments: null,
		metadata: p.metadata,
		next_action: null,
		on_behalf_of: null,
		payment_method: null,
		payment_method_configuration_details: null,
		payment_method_options: {
			card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' },
		},
		payment_method_types: methods ?? ['card'],
		processing: null,
		receipt_email: p.receipt_email ?? null,
		review: null,
		setup_future_usage: null,
		shipping: null,
		source: null,
		statement_descriptor: null,
		statement_descriptor_suffix: null,
		status: 'requires_payment_method',
		transfer_data: null,
		transfer_group: null,
	};
}

function newCharge(intent, amount, currency, paid) {
	const pm = newId('pm');
	return {
		id: newId('ch'),
		object: 'charge',
		amount,
		amount_captured: paid ? amount : 0,
		amount_refunded: 0,
		application: null,
		application_fee: null,
		application_fee_amount: null,
		balance_transaction: paid ? newId('txn') : null,
		billing_details: {
			address: { city: null, country: null, line1: null, line2: null, postal_code: null, state: null },
			email: null, name: null, phone: null, tax_id: null,
		},
		calculated_statement_descriptor: 'STRIPE',
		captured: paid,
		created: now(),
		currency,
		customer: null,
		description: intent.description,
		disputed: false,
		failure_balance_transaction: null,
		failure_code: paid ? null : 'card_declined',
		failure_message: paid ? null : 'Your card was declined.',
		fraud_details: {},
		livemode: false,
		metadata: { ...intent.metadata },
		on_behalf_of: null,
		outcome: paid
			? { advice_code: null, network_advice_code: null, network_decline_code: null,
				network_status: 'approved_by_network', reason: null, risk_level: 'normal', risk_score: 20,
				seller_message: 'Payment complete.', type: 'authorized' }
			: { advice_code: 'try_again_later', network_advice_code: null, network_decline_code: null,
				network_status: 'declined_by_network', reason: 'generic_decline', risk_level: 'normal',
				risk_score: 20, seller_message: 'The bank did not return any further details with this decline.',
				type: 'issuer_declined' },
		paid,
		payment_intent: intent.id,
		payment_method: pm,
		payment_method_details: {
			card: { brand: 'visa', country: 'US', exp_month: 12, exp_year: new Date().getUTCFullYear() + 3,
				funding: 'credit', last4: paid ? '4242' : '0002', network: 'visa' },
			type: 'card',
		},
		receipt_email: null,
		receipt_number: null,
		receipt_url: null,
		refunded: false,
		review: null,
		shipping: null,
		source: null,
		source_transfer: null,
		statement_descriptor: null,
		statement_descriptor_suffix: null,
		status: paid ? 'succeeded' : 'failed',
		transfer_data: null,
		transfer_group: null,
	};
}

// ---- the API ---------------------------------------------------------------------------------

// the top-level parameters of Stripe's reference for each endpoint: the stand-in acts on some
// (amount, currency, metadata, ...) and takes the others without acting on them
const INTENT_CREATE = ['amount', 'currency', 'allowed_payment_method_types', 'amount_details',
	'application_fee_amount', 'automatic_payment_methods', 'capture_method', 'confirm',
	'confirmation_method', 'confirmation_token', 'customer', 'customer_account', 'description',
	'error_on_requires_action', 'excluded_payment_method_types', 'expand', 'hooks', 'mandate',
	'mandate_data', 'metadata', 'off_session', 'on_behalf_of', 'payment_details', 'payment_method',
	'payment_method_configuration', 'payment_method_data', 'payment_method_options',
	'payment_method_types', 'radar_options', 'receipt_email', 'return_url', 'setup_future_usage',
	'shipping', 'statement_descriptor', 'statement_descriptor_suffix', 'transfer_data',
	'transfer_group', 'use_stripe_sdk'];
const REFUND_CREATE = ['amount', 'charge', 'currency', 'customer', 'expand', 'instructions_email',
	'metadata', 'origin', 'payment_intent', 'reason', 'refund_application_fee', 'reverse_transfer'];
const CANCELABLE = ['requires_payment_method', 'requires_capture', 'requires_confirmation',
	'requires_action', 'processing'];

function createIntent(ctx) {
	const p = ctx.params;
	allow(p, INTENT_CREATE);
	const amount = integer(p, 'amount', { required: true, min: 1 });
	const currency = currencyParam(p);
	if (amount > MAXIMUM)
		throw invalid(`Amount must be no more than ${money(MAXIMUM, currency)}`,
			{ code: 'amount_too_large', param: 'amount' }, 400, false);
	if (MINIMUM[currency] !== undefined && amount < MINIMUM[currency])
		throw invalid(`Amount must be at least ${money(MINIMUM[currency], currency)} ${currency}`,
			{ code: 'amount_too_small', param: 'amount' }, 400, false);
	let automatic;
	if (p.automatic_payment_methods !== undefined) {
		const a = p.automatic_payment_methods;
		if (typeof a !== 'object' || Array.isArray(a))
			throw badParam('Invalid object', 'automatic_payment_methods');
		allow(a, ['allow_redirects', 'enabled'], 'automatic_payment_methods');
		const enabled = boolean(a, 'enabled', 'automatic_payment_methods');
		if (enabled === undefined)
			throw badParam('Missing required param: automatic_payment_methods[enabled].',
				'automatic_payment_methods[enabled]', 'parameter_missing');
		const redirects = oneOf(a, 'allow_redirects', ['always', 'never']);
		automatic = redirects === undefined ? { enabled } : { enabled, allow_redirects: redirects };
	}
	let methods;
	if (p.payment_method_types !== undefined) {
		if (!Array.isArray(p.payment_method_types) || p.payment_method_types.some((m) => typeof m !== 'string'))
			throw badParam('Invalid array', 'payment_method_types');
		if (automatic?.enabled)
			throw badParam('You may only specify one of these parameters: automatic_payment_methods, payment_method_types.',
				'payment_method_types');
		methods = p.payment_method_types;
	}
	const description = text(p, 'description');
	const intent = newIntent({
		amount,
		currency,
		metadata: metadataParam(p),
		description: description === '' ? undefined : description,
		automatic_payment_methods: automatic,
		payment_method_types: methods,
		capture_method: oneOf(p, 'capture_method', ['automatic', 'automatic_async', 'manual']),
		confirmation_method: oneOf(p, 'confirmation_method', ['automatic', 'manual']),
		receipt_email: text(p, 'receipt_email') || undefined,
	});
	const fields = expandParam(p);
	const answer = expand(intent, fields);
	intents.set(intent.id, intent);
	emit(ctx, 'payment_intent.created', intent);
	return answer;
}

function retrieveIntent(ctx, id) {
	allow(ctx.params, ['client_secret', 'expand']);
	const intent = intents.get(id);
	if (!intent)
		throw missing('payment_intent', id, 'intent');
	return expand(intent, expandParam(ctx.params));
}

function cancelIntent(ctx, id) {
	const p = ctx.params;
	allow(p, ['cancellation_reason', 'expand']);
	const reason = oneOf(p, 'cancellation_reason', ['abandoned', 'duplicate', 'fraudulent', 'requested_by_customer']);
	const fields = expandParam(p);
	const intent = intents.get(id);
	if (!intent)
		throw missing('payment_intent', id, 'intent');
	if (!CANCELABLE.includes(intent.status))
		throw invalid(`You cannot cancel this PaymentIntent because it has a status of ${intent.status}. ` +
			`Only a PaymentIntent with one of the following statuses may be canceled: ${CANCELABLE.join(', ')}.`,
		{ code: 'payment_intent_unexpected_state', payment_intent: snapshot(intent) });
	intent.status = 'canceled';
	intent.canceled_at = now();
	intent.cancellation_reason = reason ?? null;
	intent.amount_capturable = 0;
	intent.next_action = null;
	emit(ctx, 'payment_intent.canceled', intent);
	return expand(intent, fields);
}

function createRefund(ctx) {
	const p = ctx.params;
	allow(p, REFUND_CREATE);
	const intentId = text(p, 'payment_intent');
	const chargeId = text(p, 'charge');
	if (!intentId && !chargeId)
		throw badParam('One of the following params should be provided for this request: payment_intent or charge.',
			'payment_intent', 'parameter_missing');
	const amount = integer(p, 'amount', { min: 1 });
	const reason = oneOf(p, 'reason', ['duplicate', 'fraudulent', 'requested_by_customer']);
	const metadata = metadataParam(p);
	const fields = expandParam(p);
	let charge;
	let intent;
	if (chargeId) {
		charge = charges.get(chargeId);
		if (!charge)
			throw missing('charge', chargeId, 'charge');
		intent = intents.get(charge.payment_intent);
		if (intentId && intentId !== intent.id)
			throw invalid(`The charge ${chargeId} does not belong to the PaymentIntent ${intentId}.`, { param: 'charge' });
	} else {
		intent = intents.get(intentId);
		if (!intent)
			throw missing('payment_intent', intentId, 'payment_intent');
		charge = intent.latest_charge ? charges.get(intent.latest_charge) : undefined;
	}
	if (!charge || charge.status !== 'succeeded' || intent.status !== 'succeeded')
		throw invalid(`This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
			{ code: 'charge_not_refundable', param: chargeId ? 'charge' : 'payment_intent' });
	const left = charge.amount - charge.amount_refunded;
	if (left <= 0)
		throw invalid(`Charge ${charge.id} has already been refunded.`, { code: 'charge_already_refunded' });
	if (amount !== undefined && amount > left)
		throw invalid(`Refund amount (${money(amount, charge.currency)}) is greater than unrefunded amount on charge ` +
			`(${money(left, charge.currency)})`, { code: 'amount_too_large', param: 'amount' });
	const mode = setting('refund-mode', 'succeeded');
	const settled = mode !== 'pending' && mode !== 'failed';
	const refund = {
		id: newId('re'),
		object: 'refund',
		amount: amount ?? left,
		balance_transaction: newId('txn'),
		charge: charge.id,
		created: now(),
		currency: charge.currency,
		customer: null,
		customer_account: null,
		destination_details: {
			card: { reference_status: 'pending', reference_type: 'acquirer_reference_number', type: 'refund' },
			type: 'card',
		},
		metadata,
		payment_intent: intent.id,
		payment_method: charge.payment_method,
		reason: reason ?? null,
		receipt_number: null,
		source_transfer_reversal: null,
		status: settled ? 'succeeded' : 'pending',
		transfer_reversal: null,
	};
	if (!settled)
		refund.pending_reason = 'processing';
	refunds.set(refund.id, refund);
	const before = { amount_refunded: charge.amount_refunded, refunded: charge.refunded };
	charge.amount_refunded += refund.amount;
	charge.refunded = charge.amount_refunded === charge.amount;
	const answer = expand(refund, fields);
	emit(ctx, 'refund.created', refund);
	emit(ctx, 'charge.refunded', charge, before.refunded === charge.refunded
		? { amount_refunded: before.amount_refunded } : before);
	if (mode === 'failed')
		failRefund(ctx, refund, 'declined');
	return answer;
}

// a pending refund fails: the amount goes back to what the charge may still refund
function failRefund(ctx, refund, reason) {
	const charge = charges.get(refund.charge);
	refund.status = 'failed';
	refund.failure_reason = reason;
	refund.failure_balance_transaction = newId('txn');
	delete refund.pending_reason;
	charge.amount_refunded -= refund.amount;
	charge.refunded = charge.amount_refunded === charge.amount;
	emit(ctx, 'refund.updated', refund, { status: 'pending' });
	emit(ctx, 'refund.failed', refund);
}

function retrieveRefund(ctx, id) {
	allow(ctx.params, ['expand']);
	const refund = refunds.get(id);
	if (!refund)
		throw missing('refund', id, 'id');
	return expand(refund, expandParam(ctx.params));
}

function listEvents(ctx) {
	const p = ctx.params;
	allow(p, ['created', 'delivery_success', 'ending_before', 'expand', 'limit', 'starting_after', 'type', 'types']);
	const limit = integer(p, 'limit', { min: 1, max: 100 }) ?? 10;
	const type = text(p, 'type');
	let types = p.types;
	if (types !== undefined) {
		if (!Array.isArray(types) || types.some((t) => typeof t !== 'string'))
			throw badParam('Invalid array', 'types');
		if (types.length > 20)
			throw badParam('You may pass up to 20 types.', 'types');
		if (type !== undefined)
			throw badParam('You may pass either type or types, but not both.', 'types');
	}
	if (type !== undefined)
		types = [type];
	const patterns = types?.map((t) => new RegExp(`^${t.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`));
	let range = {};
	if (p.created !== undefined) {
		if (typeof p.created === 'string') {
			const at = integer(p, 'created');
			range = { gte: at, lte: at };
		} else {
			allow(p.created, ['gt', 'gte', 'lt', 'lte'], 'created');
			for (const k of Object.keys(p.created))
				range[k] = integer(p.created, k);
		}
	}
	const success = boolean(p, 'delivery_success');
	const after = text(p, 'starting_after');
	const before = text(p, 'ending_before');
	if (after && before)
		throw badParam('You may only specify one of these parameters: ending_before, starting_after.', 'ending_before');
	const fields = expandParam(p).map((f) => {
		if (!f.startsWith('data.'))
			throw badParam(`This property cannot be expanded (${f}).`, 'expand');
		return f.slice(5);
	});
	const cursor = after || before;
	const at = cursor ? events.findIndex((e) => e.id === cursor) : -1;
	if (cursor && at < 0)
		throw missing('event', cursor, after ? 'starting_after' : 'ending_before');
	const kept = [];	// newest first
	for (let i = events.length - 1; i >= 0; i--) {
		const e = events[i];
		if (patterns && !patterns.some((re) => re.test(e.type)))
			continue;
		if ((range.gt !== undefined && !(e.created > range.gt)) || (range.gte !== undefined && !(e.created >= range.gte)) ||
		    (range.lt !== undefined && !(e.created < range.lt)) || (range.lte !== undefined && !(e.created <= range.lte)))
			continue;
		if (success !== undefined && sent.get(e.id).ok !== success)
			continue;
		if (after && i >= at)
			continue;
		if (before && i <= at)
			continue;
		kept.push(e);
	}
	// ending_before: the page just newer than the cursor, still newest first
	const page = before ? kept.slice(Math.max(0, kept.length - limit)) : kept.slice(0, limit);
	return {
		object: 'list',
		data: page.map((e) => expand(e, fields)),
		has_more: kept.length > limit,
		url: '/v1/events',
	};
}

function retrieveEvent(ctx, id) {
	allow(ctx.params, ['expand']);
	const event = eventsById.get(id);
	if (!event)
		throw missing('event', id, 'id');
	return expand(event, expandParam(ctx.params));
}

const ROUTES = [
	['POST', /^\/v1\/payment_intents$/, createIntent],
	['GET', /^\/v1\/payment_intents\/([^/]+)$/, retrieveIntent],
	['POST', /^\/v1\/payment_intents\/([^/]+)\/cancel$/, cancelIntent],
	['POST', /^\/v1\/refunds$/, createRefund],
	['GET', /^\/v1\/refunds\/([^/]+)$/, retrieveRefund],
	['GET', /^\/v1\/events$/, listEvents],
	['GET', /^\/v1\/events\/([^/]+)$/, retrieveEvent],
];

// the key of Authorization: Bearer KEY, or Basic base64(KEY:)
function presentedKey(header) {
	const m = /^(Bearer|Basic)\s+(\S+)\s*$/i.exec(header || '');
	if (!m)
		return null;
	if (m[1].toLowerCase() === 'bearer')
		return m[2];
	const plain = Buffer.from(m[2], 'base64').toString('utf8');
	const colon = plain.indexOf(':');
	return colon < 0 ? plain : plain.slice(0, colon);
}

function maskKey(key) {
	const prefix = /^(sk|rk|pk)_(test|live)_/.exec(key)?.[0] ?? '';
	const rest = key.slice(prefix.length);
	return prefix + '*'.repeat(Math.max(0, rest.length - 4)) + rest.slice(-4);
}

function authFailure(key) {
	return invalid(key === null
		? 'You did not provide an API key. You need to provide your API key in the Authorization header, ' +
			"using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See " +
			'https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.'
		: `Invalid API Key provided: ${maskKey(key)}`, {}, 401, false);
}

async function api(req, res, url, body, started) {
	const t0 = process.hrtime.bigint();
	const requestId = newRequestId();
	const method = req.method;
	const path = url.pathname;
	const query = decodeForm(url.search.slice(1));
	const params = method === 'POST' ? decodeForm(body) : query;
	const idempotencyKey = method === 'POST' && req.headers['idempotency-key'] ? req.headers['idempotency-key'] : null;
	const key = presentedKey(req.headers.authorization);
	const authOk = key !== null && key === setting('secret-key', 'sk_test_standin');
	appendFileSync(`${dir}/requests.jsonl`, JSON.stringify({
		method, path, query, idempotencyKey: req.headers['idempotency-key'] ?? null, authOk, params,
	}) + '\n');
	const mode = setting('mode', 'ok');
	if (mode === 'stall') {
		setTimeout(() => res.destroy(), STALL_MS);
		return;
	}
	const headers = { 'Stripe-Version': req.headers['stripe-version'] || API_VERSION };
	if (idempotencyKey !== null)
		headers['Idempotency-Key'] = idempotencyKey;
	const ctx = { requestId, idempotencyKey, params, deliveries: [] };
	let status = 200;
	let out;
	if (mode === 'down') {
		status = 500;
		out = pretty(errorBody({ message: 'An unknown error occurred', type: 'api_error' }, requestId));
	} else {
		const kept = idempotencyKey !== null && authOk ? idempotent.get(`${key}\n${idempotencyKey}`) : undefined;
		try {
			if (!authOk)
				throw authFailure(key);
			if (idempotencyKey !== null && idempotencyKey.length > 255)
				throw badParam(`Invalid Idempotency-Key: keys for idempotent requests are up to 255 characters long, not ${idempotencyKey.length}.`,
					'idempotency_key');
			if (kept) {
				if (kept.method !== method || kept.path !== path)
					throw new StripeFailure(400, { type: 'idempotency_error', message: 'Keys for idempotent requests can only be ' +
						`used for the same endpoint they were first used for ('${kept.method} ${kept.path}' vs '${method} ${path}'). ` +
						`Try using a key other than '${idempotencyKey}' if you meant to execute a different request.` }, false);
				if (kept.params !== canonical(params))
					throw new StripeFailure(400, { type: 'idempotency_error', message: 'Keys for idempotent requests can only be ' +
						'used with the same parameters they were first used with. Try using a key other than ' +
						`'${idempotencyKey}' if you meant to execute a different request.` }, false);
				headers['Idempotent-Replayed'] = 'true';
				headers['Original-Request'] = kept.requestId;
				status = kept.status;
				out = kept.body;
			} else {
				const route = ROUTES.find(([m, re]) => m === method && re.test(path));
				if (!route)
					throw invalid(`Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can ` +
						'help at https://support.stripe.com/.', {}, 404, false);
				const ids = route[1].exec(path).slice(1).map(decodeComponent);
				out = pretty(route[2](ctx, ...ids));
				if (idempotencyKey !== null)
					idempotent.set(`${key}\n${idempotencyKey}`, { method, path, params: canonical(params), status, body: out, requestId });
			}
		} catch (e) {
			if (!(e instanceof StripeFailure))
				throw e;
			status = e.status;
			out = pretty(errorBody(e.error, requestId));
			if (idempotencyKey !== null && authOk && e.stored && !kept)
				idempotent.set(`${key}\n${idempotencyKey}`, { method, path, params: canonical(params), status, body: out, requestId });
		}
	}
	await Promise.all(ctx.deliveries);
	if (mode === 'slow')
		await sleep(started + SLOW_MS - Date.now());
	send(res, status, out, requestId, headers);
	// the stand-in's own time for the request, its body read to its answer written
	appendFileSync(`${dir}/timings`, `${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(3)}\n`);
}

// ---- the test-only routes --------------------------------------------------------------------

class ControlFailure extends Error {
	constructor(status, message, extra = {}) {
		super(message);
		this.status = status;
		this.extra = extra;
	}
}

function controlIntent(id) {
	const intent = intents.get(id);
	if (!intent)
		throw new ControlFailure(404, `no such payment_intent: ${id}`);
	if (intent.status === 'canceled' || intent.status === 'succeeded')
		throw new ControlFailure(409, `the card cannot be confirmed: the PaymentIntent's status is ${intent.status}`,
			{ status: intent.status });
	return intent;
}

function pay(ctx, id, q) {
	const intent = controlIntent(id);
	const amount = q.amount === undefined ? intent.amount : Number(q.amount);
	if (!Number.isInteger(amount) || amount < 1)
		throw new ControlFailure(400, `amount=${q.amount} is not a positive integer`);
	const currency = q.currency ?? intent.currency;
	if (!/^[a-z]{3}$/.test(currency))
		throw new ControlFailure(400, `currency=${currency} is not a lower-case ISO code`);
	const charge = newCharge(intent, amount, currency, true);
	charges.set(charge.id, charge);
	intent.status = 'succeeded';
	intent.amount_received = amount;
	intent.amount_capturable = 0;
	intent.latest_charge = charge.id;
	intent.payment_method = charge.payment_method;
	intent.last_payment_error = null;
	intent.next_action = null;
	emit(ctx, 'charge.succeeded', charge);
	emit(ctx, 'payment_intent.succeeded', intent);
	return intent;
}

function fail(ctx, id) {
	const intent = controlIntent(id);
	const charge = newCharge(intent, intent.amount, intent.currency, false);
	charges.set(charge.id, charge);
	intent.status = 'requires_payment_method';
	intent.latest_charge = charge.id;
	intent.payment_method = null;
	intent.last_payment_error = {
		advice_code: 'try_again_later',
		charge: charge.id,
		code: 'card_declined',
		decline_code: 'generic_decline',
		doc_url: 'https://stripe.com/docs/error-codes/card-declined',
		message: 'Your card was declined.',
		payment_method_type: 'card',
		type: 'card_error',
	};
	emit(ctx, 'charge.failed', charge);
	emit(ctx, 'payment_intent.payment_failed', intent);
	return intent;
}

function settle(ctx, id, q) {
	const refund = refunds.get(id);
	if (!refund)
		throw new ControlFailure(404, `no such refund: ${id}`);
	if (refund.status !== 'pending')
		throw new ControlFailure(409, `the refund is ${refund.status}, not pending`, { status: refund.status });
	const to = q.status ?? 'succeeded';
	if (to === 'failed') {
		failRefund(ctx, refund, q.failure_reason ?? 'declined');
	} else if (to === 'succeeded') {
		refund.status = 'succeeded';
		delete refund.pending_reason;
		emit(ctx, 'refund.updated', refund, { status: 'pending' });
	} else {
		throw new ControlFailure(400, `status=${to}: succeeded or failed`);
	}
	return refund;
}

async function resend(ctx, id) {
	const event = eventsById.get(id);
	if (!event)
		throw new ControlFailure(404, `no such event: ${id}`);
	if (setting('webhook-url', '') === '')
		throw new ControlFailure(409, 'no webhook URL: DIR/webhook-url is absent or empty');
	const r = await enqueue(event, true);
	return { status: r.status };
}

async function deliverHeld(ctx, q) {
	if (setting('webhook-url', '') === '')
		throw new ControlFailure(409, 'no webhook URL: DIR/webhook-url is absent or empty');
	const order = q.order ?? 'created';
	if (order !== 'created' && order !== 'reverse')
		throw new ControlFailure(400, `order=${order}: created or reverse`);
	const todo = events.filter((e) => !sent.get(e.id).ok);
	if (order === 'reverse')
		todo.reverse();
	return Promise.all(todo.map((e) => enqueue(e, true)));
}

const state = () => ({
	payment_intents: [...intents.values()],
	refunds: [...refunds.values()],
	charges: [...charges.values()],
	events,
});

// a new account's books: every object, event and kept answer forgotten (tests that read the
// whole history, such as a reconciliation, start from nothing)
function reset() {
	for (const m of [intents, charges, refunds, eventsById, sent, idempotent])
		m.clear();
	events.length = 0;
	return { reset: true };
}

const CONTROL = [
	['POST', /^\/_stand-in\/reset$/, reset],
	['POST', /^\/_stand-in\/payment_intents\/([^/]+)\/pay$/, pay],
	['POST', /^\/_stand-in\/payment_intents\/([^/]+)\/fail$/, fail],
	['POST', /^\/_stand-in\/refunds\/([^/]+)\/settle$/, settle],
	['POST', /^\/_stand-in\/events\/([^/]+)\/resend$/, resend],
	['POST', /^\/_stand-in\/deliver$/, deliverHeld],
	['GET', /^\/_stand-in\/state$/, state],
];

async function control(req, res, url) {
	const requestId = newRequestId();
	const ctx = { requestId: null, idempotencyKey: null, deliveries: [] };
	const q = Object.fromEntries(url.searchParams);
	let status = 200;
	let out;
	try {
		const route = CONTROL.find(([m, re]) => m === req.method && re.test(url.pathname));
		if (!route)
			throw new ControlFailure(404, `no test-only route ${req.method} ${url.pathname}`);
		const ids = route[1].exec(url.pathname).slice(1).map(decodeComponent);
		out = await route[2](ctx, ...ids, q);
	} catch (e) {
		if (!(e instanceof ControlFailure))
			throw e;
		status = e.status;
		out = { error: e.message, ...e.extra };
	}
	await Promise.all(ctx.deliveries);
	send(res, status, pretty(out), requestId, {});
}

// ---- the server ------------------------------------------------------------------------------

function send(res, status, body, requestId, headers) {
	if (!res.socket || res.socket.destroyed)
		return;
	res.writeHead(status, {
		'Content-Type': 'application/json',
		'Content-Length': Buffer.byteLength(body),
		'Cache-Control': 'no-cache, no-store',
		'Request-Id': requestId,
		...headers,
	});
	res.end(body);
}

const server = createServer((req, res) => {
	const started = Date.now();
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', () => {
		const url = new URL(req.url, 'http://127.0.0.1');
		const body = Buffer.concat(chunks).toString('utf8');
		const handle = url.pathname.startsWith('/_stand-in/') ? control(req, res, url) : api(req, res, url, body, started);
		handle.catch((e) => {
			process.stderr.write(`stripe-stand-in: ${req.method} ${req.url}: ${e.stack}\n`);
			const requestId = newRequestId();
			send(res, 500, pretty(errorBody({ message: 'An unknown error occurred', type: 'api_error' }, requestId)),
				requestId, {});
		});
	});
});
server.listen(0, '127.0.0.1', () => writeFileSync(`${dir}/port`, String(server.address().port)));
