// check-responses.mjs: every answer the test suite received, checked against the document.
//
//   node openapi/check-responses.mjs OPENAPI_JSON RESPONSES_DIR [EXAMPLES_JSON]
//
// RESPONSES_DIR holds one file per answer, written by req() of tests/test_helper.bash:
// six lines (method, request target, base URL, status, Content-Type, test), then the body.
// Each answer is matched to its route the way the programs route (path decoded, one trailing
// slash dropped, literal segments before parameters); its status must be declared for that
// route, its Content-Type must be one the status declares, and its body must hold the schema.
// What is not a route is checked as honestly:
//   - a path of no route (under /api, /actuator or not): the document's NoSuchEndpoint 404,
//     or one of Apache's own answers (components.responses.ApacheNNN);
//   - a route's path with a method it does not serve: MethodNotAllowed 405 (or Apache's);
//   - /courts-test/status/NNN, a route of the test configuration only (apache/httpd.conf):
//     Apache's own answer NNN, as documented in components.responses.ApacheNNN;
//   - /api/openapi.json and /api/docs[/...]: the description itself, static files.
// A failure names the test, route, status and the schema path that failed; exit 1 if any.
// With EXAMPLES_JSON, also writes there the first answer that holds of each route and status
// (2xx, 400 and 409; lists cut to two items): the examples build.mjs puts in the document are
// real answers.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { compiler } from './schema.mjs';

const [docFile, dir, examplesFile] = process.argv.slice(2);
const examples = {};
const doc = JSON.parse(readFileSync(docFile, 'utf8'));
const { validate } = compiler(doc);

const routes = Object.entries(doc.paths).map(([path, item]) => ({
	path,
	item,
	literal: path.split('/').filter((s) => !s.startsWith('{')).length,
	re: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[A-Za-z]+\}/g, '[^/]+')}$`),
}));
// /api/match/requests/my before /api/match/requests/{id}, as the route tables order them
routes.sort((a, b) => b.literal - a.literal);

const resolve = (r) => (r?.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r);

// the path as the programs decode it (common/url.c): %XX to its byte, whatever the bytes
// spell; a % not followed by two hex digits, or %00, does not decode (the programs: 404)
function decodePath(target) {
	const raw = target.split('?')[0];
	if (/%(?![0-9A-Fa-f]{2})|%00/.test(raw))
		return null;
	const p = raw.replace(/%([0-9A-Fa-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
	return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

const esc = (s) => s.replaceAll('~', '~0').replaceAll('/', '~1');

// null when the answer holds response (an OpenAPI response object at pointer at), else why not
function holds(response, at, a, head) {
	if (!response)
		return 'status not declared';
	const content = response.content ?? {};
	if (a.body === '' && (head || Object.keys(content).length === 0))
		return null;
	if (Object.keys(content).length === 0)
		return `no body declared, got ${a.type || 'no type'} ${a.body.slice(0, 80)}`;
	// text/calendar; charset=utf-8 is an answer of text/calendar
	const type = content[a.type] ? a.type : a.type.split(';')[0].trim();
	const media = content[type];
	if (!media)
		return `Content-Type ${a.type || '(none)'} not declared (declared: ${Object.keys(content).join(', ')})`;
	if (!type.endsWith('json'))	// a text answer: only that there is one
		return a.body === '' && !head ? 'empty body' : null;
	let value;
	try {
		value = JSON.parse(a.body);
	} catch {
		return `body is not JSON: ${a.body.slice(0, 80)}`;
	}
	const err = validate(media.schema, `${at}/content/${esc(a.type)}/schema`)(value);
	return err === null ? null : `body fails the schema ${err}`;
}

// an answer of the shared responses (components.responses) NAME
const holdsShared = (name, a, head) =>
	holds(doc.components.responses[name], `#/components/responses/${name}`, a, head);
const counts = { none: 0, route: 0, other: 0, method: 0, testOnly: 0, description: 0 };
const met = new Set();
const failures = [];
const files = readdirSync(dir).sort();

for (const f of files) {
	const text = readFileSync(join(dir, f), 'utf8');
	const lines = text.split('\n');
	const a = {
		method: lines[0], target: lines[1], base: lines[2], status: lines[3], type: lines[4],
		test: lines[5], body: lines.slice(6).join('\n').trim(),
	};
	if (a.status === '000') {	// no answer at all (a server stopped on purpose)
		counts.none++;
		continue;
	}
	const path = decodePath(a.target);
	const head = a.method === 'HEAD';
	let where, why;

	if (path !== null && /^\/courts-test\/status\/\d{3}$/.test(path)) {
		counts.testOnly++;
		where = `${a.method} ${path} (test-only route)`;
		why = holdsShared(`Apache${a.status}`, a, head);
	} else if (path !== null && /^\/api\/(openapi\.json|docs(\/[^/]+)?)$/.test(path)) {
		counts.description++;
		where = `${a.method} ${path} (the description)`;
		// the document as JSON, the page as the one HTML; an error is one of Apache's own
		const want = path.endsWith('.json') ? 'application/json' : path === '/api/docs' ? 'text/html' : null;
		if (a.status !== '200')
			why = holdsShared(a.status === '404' ? 'NoSuchEndpoint' : `Apache${a.status}`, a, head);
		else
			why = want !== null && a.type !== want ? `Content-Type ${a.type}, not ${want}` : null;
	} else {
		const route = path === null ? null : routes.find((r) => r.re.test(path));
		// HEAD too is a method of its own to the programs (common/route.c): 405 unless served
		const op = route && route.item[a.method.toLowerCase()];
		if (op) {
			counts.route++;
			where = `${a.method} ${route.path}`;
			met.add(`${where} ${a.status}`);
			const r = op.responses[a.status];
			why = holds(resolve(r), r?.$ref ??
				`#/paths/${esc(route.path)}/${a.method.toLowerCase()}/responses/${a.status}`, a, head);
			// examples of the successes, and of the refusals a client most often handles
			if (why === null && a.body !== '' && a.type.includes('json') &&
			    examples[where]?.[a.status] === undefined &&
			    (a.status < '400' || a.status === '400' || a.status === '409')) {
				const body = JSON.parse(a.body);
				(examples[where] ??= {})[a.status] = Array.isArray(body) ? body.slice(0, 2) : body;
			}
		} else if (route) {
			counts.method++;
			where = `${a.method} ${route.path} (method not served)`;
			why = holdsShared(a.status === '405' ? 'MethodNotAllowed' : `Apache${a.status}`, a, head);
		} else {
			counts.other++;
			where = `${a.method} ${a.target.split('?')[0]} (no route)`;
			why = holdsShared(a.status === '404' ? 'NoSuchEndpoint' : `Apache${a.status}`, a, head);
		}
	}
	if (why !== null)
		failures.push(`${where} ${a.status}: ${why}\n    in test: ${a.test}`);
}

for (const f of failures)
	console.log(`not in the document: ${f}`);
const declared = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
const routesMet = new Set([...met].map((m) => m.split(' ').slice(0, 2).join(' '))).size;
console.log(`# ${files.length} answers checked against the document: ${counts.route} of routes ` +
	`(${routesMet} of ${declared} routes, ${met.size} route-status pairs), ${counts.method} of a ` +
	`method not served, ${counts.other} of no route, ${counts.testOnly} of the test-only route, ` +
	`${counts.description} of the description itself (${counts.none} requests got no answer); ` +
	`${failures.length} not as documented`);
if (examplesFile) {
	const sorted = Object.fromEntries(Object.keys(examples).sort().map((k) => [k, examples[k]]));
	writeFileSync(examplesFile, `${JSON.stringify(sorted, null, 1)}\n`);
}
process.exit(failures.length > 0 ? 1 : 0);
