// Drives tests/stripe-stand-in.mjs with the official client (the stripe package of
// tests/package.json), the way an integration drives Stripe, and checks that each answer is
// the one the API documents:
//   node tests/stripe-client-check.mjs DIR [CHECK...]
// DIR is the stand-in's directory: its port, secret-key and webhook-secret are read there, and
// DIR/mode and DIR/webhook-url are written for the checks that need them (and put back after).
// The checks, all of them unless named:
//   intents      create, retrieve and cancel, with the fields of the package's types
//   idempotency  the client's idempotencyKey option: replays, conflicts, what is not kept
//   refunds      a paid intent refunded in part, refused too much, refunded the rest
//   events       events.list auto-paging over several pages, both ways; events.retrieve
//   webhooks     each event POSTed before the call that made it returns, verified by
//                stripe.webhooks.constructEvent; another secret or another body is refused
//   errors       a wrong key, and the API down
// Exits 1 with a message at the first mismatch; prints one line when every check passed.
import { createServer, request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// the official package next to this file
const require = createRequire(import.meta.url);
const stripeDir = fileURLToPath(new URL('./node_modules/stripe', import.meta.url));
const Stripe = require(stripeDir);

const [dir, ...named] = process.argv.slice(2);
if (!dir) {
	process.stderr.write('usage: node stripe-client-check.mjs DIR [CHECK...]\n');
	process.exit(2);
}

function setting(name, fallback) {
	try {
		return readFileSync(`${dir}/${name}`, 'utf8').trim() || fallback;
	} catch {
		return fallback;
	}
}

const port = Number(setting('port', ''));
const key = setting('secret-key', 'sk_test_standin');
const webhookSecret = setting('webhook-secret', 'whsec_standin');
const options = { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, telemetry: false };
const stripe = new Stripe(key, options);

// ---- what a mismatch says --------------------------------------------------------------------

class Mismatch extends Error {}

function check(ok, message) {
	if (!ok)
		throw new Mismatch(message);
}

// JSON with the keys of every object in order
function canonical(v) {
	if (Array.isArray(v))
		return `[${v.map(canonical).join(',')}]`;
	if (typeof v === 'object' && v !== null)
		return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
	return JSON.stringify(v);
}

function equal(got, want, what) {
	const g = canonical(got);
	const w = canonical(want);
	check(g === w, `${what}:\n  got:  ${g.slice(0, 600)}\n  want: ${w.slice(0, 600)}`);
}

// the error a call throws, which must be of the client's class TYPE with the fields given
async function rejects(call, type, fields, what) {
	let error = null;
	try {
		await call();
	} catch (e) {
		error = e;
	}
	check(error !== null, `${what}: no error, expected ${type}`);
	check(error.type === type, `${what}: ${error.type} (${error.message}), expected ${type}`);
	for (const [k, v] of Object.entries(fields))
		check(error[k] === v, `${what}: ${k} is ${JSON.stringify(error[k])}, expected ${JSON.stringify(v)} (${error.message})`);
	return error;
}

// the fields an interface of the package's types declares: {required, optional}
const declared = new Map();
function fieldsOf(file, name) {
	const id = `${file} ${name}`;
	if (!declared.has(id)) {
		const src = readFileSync(`${stripeDir}/esm/resources/${file}`, 'utf8');
		const start = src.indexOf(`export interface ${name} {`);
		check(start >= 0, `no interface ${name} in the package's ${file}`);
		const block = src.slice(start, src.indexOf('\n}', start));
		const required = [];
		const optional = [];
		for (const m of block.matchAll(/^ {4}([a-z_]+)(\??):/gm))
			(m[2] ? optional : required).push(m[1]);
		declared.set(id, { required, optional });
	}
	return declared.get(id);
}

// the object has every field its type requires, and none it does not declare
function shape(object, file, name) {
	const { required, optional } = fieldsOf(file, name);
	const missing = required.filter((k) => !(k in object));
	const extra = Object.keys(object).filter((k) => !required.includes(k) && !optional.includes(k));
	check(missing.length === 0 && extra.length === 0,
		`${name} ${object.id}: ${missing.length ? `missing ${missing.join(', ')}` : ''}` +
		`${missing.length && extra.length ? '; ' : ''}${extra.length ? `not in the type: ${extra.join(', ')}` : ''}`);
}

// ---- the stand-in's test-only routes ---------------------------------------------------------

function control(method, path) {
	return new Promise((done, fail) => {
		const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
			const chunks = [];
			res.on('data', (c) => chunks.push(c));
			res.on('end', () => done({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
		});
		req.on('error', fail);
		req.end();
	});
}

async function pay(id) {
	const r = await control('POST', `/_stand-in/payment_intents/${id}/pay`);
	check(r.status === 200, `paying ${id}: ${r.status} ${JSON.stringify(r.body)}`);
	return r.body;
}

const state = async () => (await control('GET', '/_stand-in/state')).body;
const requests = () => readFileSync(`${dir}/requests.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const recent = (t) => Math.abs(Date.now() / 1000 - t) < 120;
const token = () => randomBytes(6).toString('hex');

const ORDER = { payment_id: 'pay-1', match_id: 'match-1' };
const newIntent = (extra = {}, opts = undefined) => stripe.paymentIntents.create({
	amount: 2000, currency: 'eur', metadata: ORDER, description: 'Court 1, 18:00', ...extra,
}, opts);

// ---- the checks ------------------------------------------------------------------------------

const CHECKS = {
	async intents() {
		const created = await newIntent({ automatic_payment_methods: { enabled: true } });
		shape(created, 'PaymentIntents.d.ts', 'PaymentIntent');
		check(/^pi_[A-Za-z0-9]{24}$/.test(created.id), `PaymentIntent id ${created.id}`);
		equal({
			object: created.object, amount: created.amount, amount_capturable: created.amount_capturable,
			amount_received: created.amount_received, currency: created.currency, status: created.status,
			metadata: created.metadata, description: created.description, livemode: created.livemode,
			latest_charge: created.latest_charge, cancellation_reason: created.cancellation_reason,
			canceled_at: created.canceled_at, last_payment_error: created.last_payment_error,
			capture_method: created.capture_method, confirmation_method: created.confirmation_method,
			payment_method: created.payment_method, automatic_payment_methods: created.automatic_payment_methods,
		}, {
			object: 'payment_intent', amount: 2000, amount_capturable: 0, amount_received: 0, currency: 'eur',
			status: 'requires_payment_method', metadata: ORDER, description: 'Court 1, 18:00', livemode: false,
			latest_charge: null, cancellation_reason: null, canceled_at: null, last_payment_error: null,
			capture_method: 'automatic', confirmation_method: 'automatic', payment_method: null,
			automatic_payment_methods: { enabled: true },
		}, 'the new PaymentIntent');
		check(created.client_secret.startsWith(`${created.id}_secret_`), `client_secret ${created.client_secret}`);
		check(Number.isInteger(created.created) && recent(created.created), `created ${created.created}`);
		check(/^req_[A-Za-z0-9]+$/.test(created.lastResponse.requestId), `Request-Id ${created.lastResponse.requestId}`);
		check(created.lastResponse.apiVersion === Stripe.API_VERSION, `Stripe-Version ${created.lastResponse.apiVersion}`);

		equal(await stripe.paymentIntents.retrieve(created.id), created, 'the PaymentIntent retrieved');
		await rejects(() => stripe.paymentIntents.retrieve('pi_nosuchintent'), 'StripeInvalidRequestError',
			{ statusCode: 404, code: 'resource_missing', param: 'intent' }, 'an unknown PaymentIntent');
		await rejects(() => stripe.paymentIntents.create({ currency: 'eur' }), 'StripeInvalidRequestError',
			{ statusCode: 400, code: 'parameter_missing', param: 'amount' }, 'no amount');
		await rejects(() => stripe.paymentIntents.create({ amount: 2000 }), 'StripeInvalidRequestError',
			{ statusCode: 400, code: 'parameter_missing', param: 'currency' }, 'no currency');
		await rejects(() => stripe.paymentIntents.create({ amount: 0, currency: 'eur' }), 'StripeInvalidRequestError',
			{ statusCode: 400, param: 'amount' }, 'an amount of 0');
		await rejects(() => stripe.paymentIntents.create({ amount: 2000, currency: 'eur', colour: 'red' }),
			'StripeInvalidRequestError', { statusCode: 400, code: 'parameter_unknown', param: 'colour' }, 'an unknown parameter');

		const canceled = await stripe.paymentIntents.cancel(created.id, { cancellation_reason: 'requested_by_customer' });
		shape(canceled, 'PaymentIntents.d.ts', 'PaymentIntent');
		check(canceled.status === 'canceled' && canceled.cancellation_reason === 'requested_by_customer',
			`canceled: ${canceled.status} ${canceled.cancellation_reason}`);
		check(Number.isInteger(canceled.canceled_at) && recent(canceled.canceled_at), `canceled_at ${canceled.canceled_at}`);
		const again = await rejects(() => stripe.paymentIntents.cancel(created.id), 'StripeInvalidRequestError',
			{ statusCode: 400, code: 'payment_intent_unexpected_state' }, 'a second cancel');
		check(again.payment_intent?.id === created.id && again.payment_intent.status === 'canceled',
			`the error's payment_intent: ${JSON.stringify(again.payment_intent)?.slice(0, 200)}`);
		const paid = await newIntent();
		await pay(paid.id);
		await rejects(() => stripe.paymentIntents.cancel(paid.id), 'StripeInvalidRequestError',
			{ statusCode: 400, code: 'payment_intent_unexpected_state' }, 'canceling a succeeded intent');
		const r = await control('POST', `/_stand-in/payment_intents/${created.id}/pay`);
		check(r.status === 409 && typeof r.body.error === 'string', `paying a canceled intent: ${r.status}`);

		const mine = (await stripe.events.list({ type: 'payment_intent.*', limit: 100 })).data
			.filter((e) => e.data.object.id === created.id).map((e) => e.type);
		equal(mine, ['payment_intent.canceled', 'payment_intent.created'], "the intent's events, newest first");
	},

	async idempotency() {
		const k = `check-${token()}`;
		const first = await newIntent({}, { idempotencyKey: k });
		const second = await newIntent({}, { idempotencyKey: k });
		equal(second, first, 'the answer under the same key');
		check(first.lastResponse.headers['idempotent-replayed'] === undefined, 'the first answer says it is replayed');
		check(second.lastResponse.headers['idempotent-replayed'] === 'true',
			`Idempotent-Replayed: ${second.lastResponse.headers['idempotent-replayed']}`);
		const s = await state();
		check(s.payment_intents.filter((p) => p.id === first.id).length === 1, 'the intent twice');
		check(s.events.filter((e) => e.data.object.id === first.id).length === 1, 'payment_intent.created twice');
		check(s.events.find((e) => e.data.object.id === first.id).request.idempotency_key === k,
			"the event's request.idempotency_key");
		await rejects(() => newIntent({ amount: 2500 }, { idempotencyKey: k }), 'StripeIdempotencyError',
			{ statusCode: 400, rawType: 'idempotency_error' }, 'the same key with another amount');
		await rejects(() => stripe.refunds.create({ payment_intent: first.id }, { idempotencyKey: k }),
			'StripeIdempotencyError', { statusCode: 400, rawType: 'idempotency_error' }, 'the same key on another endpoint');

		// a request refused before the endpoint ran is not kept: the key is free again
		const k2 = `check-${token()}`;
		await rejects(() => stripe.paymentIntents.create({ amount: 2000 }, { idempotencyKey: k2 }),
			'StripeInvalidRequestError', { code: 'parameter_missing' }, 'no currency under a key');
		const fixed = await newIntent({}, { idempotencyKey: k2 });
		check(fixed.lastResponse.headers['idempotent-replayed'] === undefined, 'a key of a refused request replayed');

		// an endpoint's own refusal is kept, and replayed even once things changed
		const k3 = `check-${token()}`;
		await rejects(() => stripe.refunds.create({ payment_intent: fixed.id }, { idempotencyKey: k3 }),
			'StripeInvalidRequestError', { code: 'charge_not_refundable' }, 'refunding an unpaid intent');
		await pay(fixed.id);
		const replayed = await rejects(() => stripe.refunds.create({ payment_intent: fixed.id }, { idempotencyKey: k3 }),
			'StripeInvalidRequestError', { code: 'charge_not_refundable' }, 'the refusal replayed');
		check(replayed.headers['idempotent-replayed'] === 'true', 'the replayed refusal has no Idempotent-Replayed');
		const refund = await stripe.refunds.create({ payment_intent: fixed.id }, { idempotencyKey: `check-${token()}` });
		check(refund.status === 'succeeded' && refund.amount === 2000, `the refund under a new key: ${refund.status}`);
	},

	async refunds() {
		const intent = await newIntent();
		await rejects(() => stripe.refunds.create({ payment_intent: intent.id }), 'StripeInvalidRequestError',
			{ statusCode: 400, code: 'charge_not_refundable' }, 'refunding an unpaid intent');
		await pay(intent.id);
		const paid = await stripe.paymentIntents.retrieve(intent.id);
		check(paid.status === 'succeeded' && paid.amount_received === 2000 && /^ch_/.test(paid.latest_charge) &&
			/^pm_/.test(paid.payment_method), `the paid intent: ${paid.status} ${paid.amount_received} ${paid.latest_charge}`);

		const part = await stripe.refunds.create({ payment_intent: intent.id, amount: 500, reason: 'requested_by_customer',
			metadata: { refund_id: 'refund-1' } });
		shape(part, 'Refunds.d.ts', 'Refund');
		check(/^re_[A-Za-z0-9]{24}$/.test(part.id), `Refund id ${part.id}`);
		equal({ object: part.object, amount: part.amount, currency: part.currency, payment_intent: part.payment_intent,
			charge: part.charge, status: part.status, reason: part.reason, metadata: part.metadata },
		{ object: 'refund', amount: 500, currency: 'eur', payment_intent: intent.id, charge: paid.latest_charge,
			status: 'succeeded', reason: 'requested_by_customer', metadata: { refund_id: 'refund-1' } }, 'the partial refund');
		const tooMuch = await rejects(() => stripe.refunds.create({ payment_intent: intent.id, amount: 1600 }),
			'StripeInvalidRequestError', { statusCode: 400, code: 'amount_too_large', param: 'amount' }, 'refunding 16.00 of 15.00');
		check(tooMuch.message.includes('(€16.00)') && tooMuch.message.includes('(€15.00)'), `the message: ${tooMuch.message}`);
		const rest = await stripe.refunds.create({ payment_intent: intent.id });
		check(rest.amount === 1500 && rest.status === 'succeeded', `the rest: ${rest.amount} ${rest.status}`);
		await rejects(() => stripe.refunds.create({ payment_intent: intent.id, amount: 1 }), 'StripeInvalidRequestError',
			{ statusCode: 400, code: 'charge_already_refunded' }, 'refunding a refunded charge');
		equal(await stripe.refunds.retrieve(part.id), part, 'the refund retrieved');
		await rejects(() => stripe.refunds.retrieve('re_nosuchrefund'), 'StripeInvalidRequestError',
			{ statusCode: 404, code: 'resource_missing' }, 'an unknown refund');

		const s = await state();
		const charge = s.charges.find((c) => c.id === paid.latest_charge);
		shape(charge, 'Charges.d.ts', 'Charge');
		check(charge.amount_refunded === 2000 && charge.refunded === true && charge.payment_intent === intent.id,
			`the charge: ${charge.amount_refunded} ${charge.refunded}`);
		const mine = s.events.filter((e) => e.data.object.id === charge.id || e.data.object.charge === charge.id);
		equal(mine.map((e) => [e.type, e.data.object.amount_refunded ?? e.data.object.amount]), [
			['charge.succeeded', 0], ['refund.created', 500], ['charge.refunded', 500],
			['refund.created', 1500], ['charge.refunded', 2000]], "the charge's events");
		check(mine.at(-1).data.object.refunded === true && mine[2].data.object.refunded === false, 'charge.refunded: refunded');
		equal(mine[2].data.previous_attributes, { amount_refunded: 0 }, 'the first charge.refunded: previous_attributes');
	},

	async events() {
		for (let i = 0; i < 4; i++)
			await newIntent({ metadata: { n: String(i) } });
		const all = (await state()).events;
		const ids = all.map((e) => e.id);
		check(all.length >= 4, `${all.length} events`);
		const before = requests().length;
		const newestFirst = await stripe.events.list({ limit: 3 }).autoPagingToArray({ limit: 10000 });
		equal(newestFirst.map((e) => e.id), [...ids].reverse(), 'events.list auto-paging, newest first');
		check(new Set(newestFirst.map((e) => e.id)).size === ids.length, 'an event listed twice');
		const pages = requests().slice(before).filter((r) => r.path === '/v1/events');
		check(pages.length === Math.ceil(ids.length / 3) && pages.slice(1).every((r) => r.query.starting_after),
			`${pages.length} pages for ${ids.length} events`);
		// from the oldest, with ending_before: the same events, oldest first
		const oldestFirst = await stripe.events.list({ limit: 2, ending_before: ids[0] }).autoPagingToArray({ limit: 10000 });
		equal(oldestFirst.map((e) => e.id), ids.slice(1), 'events.list from ending_before');

		const page = await stripe.events.list({ limit: 2 });
		equal({ object: page.object, url: page.url, has_more: page.has_more, n: page.data.length },
			{ object: 'list', url: '/v1/events', has_more: true, n: 2 }, 'a page');
		const created = await stripe.events.list({ type: 'payment_intent.created', limit: 100 });
		check(created.data.length > 0 && created.data.every((e) => e.type === 'payment_intent.created'), 'type=');
		const since = await stripe.events.list({ created: { gte: all.at(-1).created }, limit: 100 });
		check(since.data.some((e) => e.id === ids.at(-1)) && since.data.every((e) => e.created >= all.at(-1).created),
			'created[gte]=');
		const one = await stripe.events.retrieve(ids.at(-1));
		shape(one, 'Events.d.ts', 'EventBase');
		equal(one, all.at(-1), 'the event retrieved');
		check(/^evt_[A-Za-z0-9]{24}$/.test(one.id) && one.object === 'event' && one.livemode === false &&
			typeof one.api_version === 'string' && /^req_/.test(one.request.id), `the event: ${JSON.stringify(one).slice(0, 300)}`);
		shape(one.data.object, 'PaymentIntents.d.ts', 'PaymentIntent');
		await rejects(() => stripe.events.retrieve('evt_nosuchevent'), 'StripeInvalidRequestError',
			{ statusCode: 404, code: 'resource_missing' }, 'an unknown event');
		await rejects(() => stripe.events.list({ limit: 101 }), 'StripeInvalidRequestError',
			{ statusCode: 400, param: 'limit' }, 'limit=101');
	},

	async webhooks() {
		const got = [];
		const receiver = createServer((req, res) => {
			const chunks = [];
			req.on('data', (c) => chunks.push(c));
			req.on('end', () => {
				got.push({ body: Buffer.concat(chunks), headers: req.headers, method: req.method, url: req.url });
				res.writeHead(200);
				res.end();
			});
		});
		await new Promise((done) => receiver.listen(0, '127.0.0.1', done));
		writeFileSync(`${dir}/webhook-url`, `http://127.0.0.1:${receiver.address().port}/hooks/stripe\n`);
		try {
			const intent = await newIntent();
			// delivered before the call that made it returned
			check(got.length === 1, `${got.length} webhook POSTs by the time create() returned`);
			const [hook] = got;
			check(hook.method === 'POST' && hook.url === '/hooks/stripe', `${hook.method} ${hook.url}`);
			check(hook.headers['content-type'] === 'application/json; charset=utf-8', `Content-Type ${hook.headers['content-type']}`);
			check(hook.headers['user-agent'] === 'Stripe/1.0 (+https://stripe.com/docs/webhooks)', `User-Agent ${hook.headers['user-agent']}`);
			check(/^t=\d+,v1=[0-9a-f]{64}$/.test(hook.headers['stripe-signature']), `Stripe-Signature ${hook.headers['stripe-signature']}`);
			const event = stripe.webhooks.constructEvent(hook.body, hook.headers['stripe-signature'], webhookSecret);
			check(event.type === 'payment_intent.created' && event.request.id === intent.lastResponse.requestId,
				`the event: ${event.type} ${event.request.id}`);
			equal(event.data.object, intent, "the event's object");
			check(hook.body.toString('utf8') === JSON.stringify(event, null, 2), 'the body is not pretty JSON');
			await rejects(() => stripe.webhooks.constructEvent(hook.body, hook.headers['stripe-signature'], 'whsec_another'),
				'StripeSignatureVerificationError', {}, 'another secret');
			const tampered = hook.body.toString('utf8').replace('"amount": 2000', '"amount": 1');
			await rejects(() => stripe.webhooks.constructEvent(tampered, hook.headers['stripe-signature'], webhookSecret),
				'StripeSignatureVerificationError', {}, 'another body');

			await pay(intent.id);
			check(got.length === 3, `${got.length} webhook POSTs after the payment`);
			const types = got.slice(1).map((h) => stripe.webhooks.constructEvent(h.body, h.headers['stripe-signature'],
				webhookSecret).type);
			equal(types, ['charge.succeeded', 'payment_intent.succeeded'], 'the events of a payment, in order');
			const delivered = readFileSync(`${dir}/deliveries.jsonl`, 'utf8').trim().split('\n').slice(-3).map((l) => JSON.parse(l));
			equal(delivered.map((d) => [d.type, d.status]), [['payment_intent.created', 200], ['charge.succeeded', 200],
				['payment_intent.succeeded', 200]], 'deliveries.jsonl');
			check((await stripe.events.retrieve(event.id)).pending_webhooks === 0, 'pending_webhooks after a 200');
		} finally {
			unlinkSync(`${dir}/webhook-url`);
			receiver.close();
		}
	},

	async errors() {
		const wrong = new Stripe('sk_test_notthekey', options);
		const e = await rejects(() => wrong.paymentIntents.create({ amount: 2000, currency: 'eur' }),
			'StripeAuthenticationError', { statusCode: 401, rawType: 'invalid_request_error' }, 'a wrong key');
		check(e.message.startsWith('Invalid API Key provided: sk_test_'), `the message: ${e.message}`);
		check(!e.message.includes('notthekey'), 'the message shows the whole key');
		const mode = setting('mode', 'ok');
		writeFileSync(`${dir}/mode`, 'down\n');
		try {
			await rejects(() => newIntent(), 'StripeAPIError', { statusCode: 500, rawType: 'api_error' }, 'the API down');
			await rejects(() => stripe.events.list(), 'StripeAPIError', { statusCode: 500 }, 'the API down, a GET');
			check((await control('GET', '/_stand-in/state')).status === 200, 'the test-only routes while the API is down');
		} finally {
			writeFileSync(`${dir}/mode`, `${mode}\n`);
		}
	},
};

const run = named.length ? named : Object.keys(CHECKS);
for (const name of run) {
	if (!CHECKS[name]) {
		process.stderr.write(`stripe-client-check: no check ${name} (${Object.keys(CHECKS).join(', ')})\n`);
		process.exit(2);
	}
	try {
		await CHECKS[name]();
	} catch (e) {
		process.stderr.write(`stripe-client-check: ${name}: ${e instanceof Mismatch ? e.message : e.stack}\n`);
		process.exit(1);
	}
}
process.stdout.write(`stripe-client-check: ${run.length} checks passed (${run.join(', ')}) against 127.0.0.1:${port}\n`);
