// build.mjs: builds the API description and its page (`make`, into BUILD/openapi/).
//
//   node openapi/build.mjs OUT_DIR NODE_MODULES_DIR
//
// OUT_DIR/openapi.json is the OpenAPI 3.1 document: every route of the programs' route tables
// (routes.mjs) with what api.mjs says of it, the caller it needs, its parameters, body, every
// status it can answer and the stable problem codes of each. A route without an entry in
// api.mjs, or an entry without a route, stops the build. OUT_DIR/docs.html and OUT_DIR/docs/
// are the page that renders it (Swagger UI from the pinned swagger-ui-dist, with its license).
//
// The examples of the answers are real ones, openapi/examples.json: the first answer of each
// route and status that held the document in a run of the suite, kept by
//   KEEP_STATE=1 MODES=cgi scripts/test.sh [FILES]   (prints the state directory kept)
//   node openapi/check-responses.mjs build/openapi/openapi.json STATE/answers openapi/examples.json
// tests/95-openapi.bats checks that each still holds its schema (lint.mjs).
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { routes as described, schemas } from './api.mjs';
import { readRoutes } from './routes.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const [outDir, nodeModules] = process.argv.slice(2);
if (!outDir || !nodeModules) {
	console.error('usage: node openapi/build.mjs OUT_DIR NODE_MODULES_DIR');
	process.exit(2);
}

const REASONS = {
	200: 'OK', 201: 'Created', 204: 'No Content', 304: 'Not Modified',
	400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found',
	405: 'Method Not Allowed', 408: 'Request Timeout', 409: 'Conflict', 411: 'Length Required',
	413: 'Content Too Large', 414: 'URI Too Long', 415: 'Unsupported Media Type',
	422: 'Unprocessable Content', 429: 'Too Many Requests', 431: 'Request Header Fields Too Large',
	500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable',
	504: 'Gateway Timeout',
};

// Apache's own answers (apache/errors/*.json through ErrorDocument): { status: code }
const apacheErrors = Object.fromEntries(readdirSync(join(root, 'apache/errors'))
	.filter((f) => /^\d{3}\.json$/.test(f))
	.map((f) => JSON.parse(readFileSync(join(root, 'apache/errors', f), 'utf8')))
	.map((p) => [p.status, p.code]));
// those that Apache can give on any route: a request it cannot read or that is too big or
// slow, a client over the address limits, a program that failed, timed out or is down
const APACHE_ON_ROUTES = [400, 408, 411, 413, 414, 429, 431, 500, 502, 503, 504];
const APACHE_ONLY = [408, 411, 414, 431, 502, 504];

const examples = existsSync(join(here, 'examples.json'))
	? JSON.parse(readFileSync(join(here, 'examples.json'), 'utf8')) : {};

// { status: Set(codes) } every problem a route can answer, from its table entry and api.mjs
function problemCodes(route, entry) {
	const codes = {};
	const add = (status, ...list) => list.forEach((c) => (codes[status] ??= new Set()).add(c));
	const program = !route.path.startsWith('/actuator/');

	for (const s of APACHE_ON_ROUTES)
		add(s, apacheErrors[s]);
	add(404, 'NOT_FOUND');			// a path that does not decode (http.c)
	add(413, 'BODY_TOO_LARGE');		// over 64 KiB (http.c)
	add(500, 'INTERNAL_ERROR');
	if (route.params.length > 0 || (entry.query ?? []).length > 0)
		add(400, 'VALIDATION_FAILED');
	if (route.auth !== 'NONE') {
		add(401, 'UNAUTHORIZED', 'INVALID_TOKEN');
		add(503, 'AUTH_UNAVAILABLE');
		if (route.auth !== 'PLAYER')
			add(403, 'FORBIDDEN');
		if (route.method !== 'GET' && route.auth !== 'ADMIN')
			add(429, 'RATE_LIMITED');	// the write budget (budget.c)
	}
	if (route.raw) {			// a signed body, read by the handler (BODY_RAW)
		add(400, 'BODY_REQUIRED');
		add(415, 'UNSUPPORTED_MEDIA_TYPE');
	} else if (route.body) {
		add(400, ...(route.bodyOptional ? [] : ['BODY_REQUIRED']), 'MALFORMED_JSON', 'VALIDATION_FAILED');
		add(415, 'UNSUPPORTED_MEDIA_TYPE');
	}
	if (route.idempotent) {
		add(400, 'VALIDATION_FAILED');
		add(409, 'IDEMPOTENCY_KEY_IN_USE');
		add(422, 'IDEMPOTENCY_KEY_REUSED');
	}
	if (program) {
		// common/sql.c: what a database failure answers
		add(400, 'INVALID_VALUE');
		add(503, 'DATABASE_UNAVAILABLE');
		if (route.method !== 'GET')
			add(409, 'CONFLICT', 'CONCURRENT_UPDATE');
	}
	for (const [status, list] of Object.entries(entry.problems ?? {}))
		add(status, ...list);
	return codes;
}

const problemSchema = (status, codes) => ({
	$ref: '#/components/schemas/Problem',
	type: 'object',
	properties: { status: { const: Number(status) }, code: { enum: [...codes].sort() } },
});

function problemResponse(status, codes, key) {
	const content = { schema: problemSchema(status, codes) };
	const ex = examples[key]?.[status];
	if (ex !== undefined)
		content.example = ex;
	return {
		description: `${REASONS[status]}: problem+json, code ${[...codes].sort().map((c) => `\`${c}\``).join(', ')}.`,
		content: { 'application/problem+json': content },
	};
}

const ROLE_TEXT = {
	NONE: 'No token needed; a token sent anyway is ignored.',
	PLAYER: 'A valid bearer token (any player).',
	OWNER: 'A valid bearer token with the OWNER role.',
	ADMIN: 'A valid bearer token with the ADMIN role.',
};
// who else may use an owner route on a venue (the route table's STAFF_ flags); the lists,
// which name no venue, show what the caller owns or staffs
const staffRule = (route) => route.staff ?? (route.params.length === 0 && route.method === 'GET' ? 'LIST' : 'NONE');
const STAFF_TEXT = {
	LIST: ' Or the token of a venue\'s staff (no role needed): the list shows what the caller owns or staffs.',
	NONE: ' Of the venue\'s staff, nobody.',
	MANAGER: ' Or the token of a MANAGER of the venue (no role needed).',
	DESK: ' Or the token of the venue\'s staff, MANAGER or DESK (no role needed).',
};

function operation(route, entry) {
	const key = `${route.method} ${route.path}`;
	const KINDS = {
		uuid: ['A UUID.', { type: 'string', format: 'uuid' }],
		date: ['A date YYYY-MM-DD.', { type: 'string', format: 'date' }],
		secret: ['A secret: 64 hex digits (any other text is 404).', { type: 'string', pattern: '^[0-9a-f]{64}$' }],
		text: ['A name, as it is (at most 255 bytes).', { type: 'string', minLength: 1, maxLength: 255 }],
	};
	const params = route.params.map(({ name, kind }) => ({
		name, in: 'path', required: true, description: KINDS[kind][0], schema: KINDS[kind][1],
	}));
	params.push(...(entry.query ?? []));
	if (route.idempotent)
		params.push({ $ref: '#/components/parameters/IdempotencyKey' });
	if (entry.etag)
		params.push({ $ref: '#/components/parameters/IfNoneMatch' });

	const op = {
		tags: [entry.tag],
		summary: entry.summary,
		operationId: `${route.program}_${route.handler}`,
		description: [entry.description, route.comment && `From the handler (\`cgi-bin/${route.program}.c\`): ${route.comment}`,
			`**Caller:** ${ROLE_TEXT[route.auth]}${route.auth === 'OWNER' ? STAFF_TEXT[staffRule(route)] : ''}`,
			route.idempotent ? 'Honours `Idempotency-Key`: the same key and request answer the first answer again.' : null]
			.filter(Boolean).join('\n\n'),
		security: route.auth === 'NONE' ? [] :
			[{ bearerAuth: route.auth === 'PLAYER' ? [] : [route.auth] }],
		'x-courts-program': `${route.program}.cgi`,
	};
	if (route.raw)		// checked as sent, by its signature, before anything reads it
		op['x-courts-signed-body'] = true;
	if (params.length > 0)
		op.parameters = params;
	if (route.body)
		op.requestBody = {
			required: !route.bodyOptional,
			content: { 'application/json': { schema: { $ref: `#/components/schemas/${entry.body}` } } },
		};
	else if (entry.body)
		throw new Error(`${key}: api.mjs gives a body, the route table does not`);

	const responses = {};
	for (const [status, ok] of Object.entries(entry.ok)) {
		const r = { description: ok.description ?? (status === '204' ? 'Done; no body.' : REASONS[status] ?? 'Success.') };
		if (ok.schema) {
			const content = { schema: ok.schema };
			const ex = examples[key]?.[status];
			if (ex !== undefined)
				content.example = ex;
			r.content = { [ok.type ?? 'application/json']: content, ...ok.also };
		}
		if (ok.paged)
			r.headers = { Link: { $ref: '#/components/headers/Link' } };
		if (entry.etag && status === '200')
			r.headers = { ...r.headers, ETag: { $ref: '#/components/headers/ETag' } };
		responses[status] = r;
	}
	for (const [status, codes] of Object.entries(problemCodes(route, entry))) {
		// the statuses only Apache answers: the shared description of its answer
		if (APACHE_ONLY.includes(Number(status)) && codes.size === 1 && !responses[status] &&
		    examples[key]?.[status] === undefined) {
			responses[status] = { $ref: `#/components/responses/Apache${status}` };
			continue;
		}
		const p = problemResponse(status, codes, key);
		if (responses[status]) {	// a status with a body of its own too (health's 503 DOWN)
			responses[status].content = { ...responses[status].content, ...p.content };
			responses[status].description += ` Or ${p.description}`;
		} else
			responses[status] = p;
		if (status === '401')
			responses[status].headers = { 'WWW-Authenticate': { $ref: '#/components/headers/WWWAuthenticate' } };
		if (status === '429')
			responses[status].headers = { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } };
	}
	op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a - b));
	return op;
}

const tableRoutes = readRoutes(root);
const paths = {};
const seen = new Set();
for (const route of tableRoutes) {
	const key = `${route.method} ${route.path}`;
	const entry = described[key];
	if (!entry)
		throw new Error(`${key} (cgi-bin/${route.program}.c): not described in openapi/api.mjs`);
	seen.add(key);
	(paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, entry);
}
const extra = Object.keys(described).filter((k) => !seen.has(k));
if (extra.length > 0)
	throw new Error(`openapi/api.mjs describes routes no program serves: ${extra.join(', ')}`);

const apacheResponse = (status) => ({
	description: `${REASONS[status]}, answered by Apache itself (apache/errors/${status}.json).`,
	content: { 'application/problem+json': { schema: problemSchema(status, [apacheErrors[status]]) } },
});

const version = readFileSync(join(root, 'Makefile'), 'utf8').match(/^VERSION\s*:=\s*(\S+)/m)[1];
const doc = {
	openapi: '3.1.0',
	info: {
		title: 'Courts: venues, courts and match-making',
		version,
		summary: 'Court booking and match-making for padel and tennis clubs.',
		description: readFileSync(join(here, 'description.md'), 'utf8'),
		license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
	},
	jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
	servers: [{ url: '..', description: 'The server this document is served from (its BASE_PATH included).' }],
	tags: [
		{ name: 'owner venues', description: 'Venues of the authenticated owner.' },
		{ name: 'owner resources', description: 'Courts of the authenticated owner\'s venues.' },
		{ name: 'owner desk', description: 'The club\'s day: court blocks and desk bookings, the day sheet, revenue and occupancy, matches called off, check-in at the desk.' },
		{ name: 'venue staff', description: 'Who may act for a venue besides its owner, and the record of what was done on it.' },
		{ name: 'public', description: 'What players see without a token: venues, courts, slots.' },
		{ name: 'match-making', description: 'Search, match requests, invitations and joins of the authenticated player.' },
		{ name: 'players', description: 'The authenticated player\'s profile.' },
		{ name: 'notifications', description: 'What the service told the authenticated player.' },
		{ name: 'calendar', description: 'Calendar feeds (iCalendar) of a player\'s matches and of a venue\'s booked courts.' },
		{ name: 'payments', description: 'What the payment provider tells the service (PAYMENT_PROVIDER=stripe).' },
		{ name: 'admin', description: 'Approval and moderation by administrators.' },
		{ name: 'health', description: 'For load balancers and operators.' },
	],
	paths,
	components: {
		schemas,
		securitySchemes: {
			bearerAuth: {
				type: 'http', scheme: 'bearer', bearerFormat: 'JWT',
				description: 'A JWT of the configured identity provider (issuer and audience checked). The roles a route needs (OWNER, ADMIN) are listed in its security requirement and come from the token\'s roles claim.',
			},
		},
		parameters: {
			IdempotencyKey: {
				name: 'Idempotency-Key', in: 'header', required: false,
				description: 'Makes a retried write safe: the same key with the same request answers the first answer again; with another request 422.',
				schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
			},
			IfNoneMatch: {
				name: 'If-None-Match', in: 'header', required: false,
				description: 'The ETag of an answer the client keeps: 304 while it is still the answer.',
				schema: { type: 'string' },
			},
		},
		headers: {
			Link: { description: 'RFC 8288 `<...>; rel="next"` while more items remain.', schema: { type: 'string' } },
			ETag: { description: 'Tag of this answer, for If-None-Match.', schema: { type: 'string' } },
			WWWAuthenticate: { description: 'The Bearer challenge.', schema: { type: 'string' } },
			RetryAfter: { description: 'Seconds to wait.', schema: { type: 'integer', minimum: 0 } },
		},
		responses: {
			NoSuchEndpoint: {
				description: 'Any other path under /api or /actuator: problem+json `NOT_FOUND`, from the programs or Apache.',
				content: { 'application/problem+json': { schema: problemSchema(404, ['NOT_FOUND']) } },
			},
			MethodNotAllowed: {
				description: 'A path of the API with a method it does not serve: problem+json `METHOD_NOT_ALLOWED` and an `Allow` header.',
				headers: { Allow: { description: 'The methods of the path.', schema: { type: 'string' } } },
				content: { 'application/problem+json': { schema: problemSchema(405, ['METHOD_NOT_ALLOWED']) } },
			},
			...Object.fromEntries(Object.keys(apacheErrors).map((s) => [`Apache${s}`, apacheResponse(s)])),
		},
	},
};

mkdirSync(join(outDir, 'docs'), { recursive: true });
writeFileSync(join(outDir, 'openapi.json'), `${JSON.stringify(doc)}\n`);

// the page: Swagger UI's own files, its license, and ours
const ui = join(nodeModules, 'swagger-ui-dist');
for (const f of ['swagger-ui.css', 'swagger-ui-bundle.js', 'LICENSE', 'NOTICE'])
	if (existsSync(join(ui, f)))
		copyFileSync(join(ui, f), join(outDir, 'docs', f));
const uiVersion = JSON.parse(readFileSync(join(ui, 'package.json'), 'utf8')).version;
copyFileSync(join(here, 'docs.js'), join(outDir, 'docs', 'docs.js'));
writeFileSync(join(outDir, 'docs.html'),
	readFileSync(join(here, 'docs.html'), 'utf8').replaceAll('@UI_VERSION@', uiVersion));
console.log(`openapi: ${tableRoutes.length} routes, ${Object.keys(paths).length} paths -> ${join(outDir, 'openapi.json')}`);
