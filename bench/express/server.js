// server.js: the reference service of `make bench` (mode express): what a team that wrote
// this service on Node.js would run. One process, Express, pg (a pool of 16 connections) and
// jsonwebtoken, serving the read endpoints the benchmark drives with the same answers as the
// programs of cgi-bin/, over the same database:
//
//   GET /actuator/health                 SELECT 1
//   GET /api/resources/{id}/slots?date=  one statement over resource_slots
//                                        (sql/areas/30_slots.sql), the JSON built by
//                                        PostgreSQL, as cgi-bin/public.c did before its
//                                        answers were reused (no ETag, nothing kept)
//   GET /api/owner/venues                one page of venue_doc (sql/areas/90_json.sql), as
//                                        cgi-bin/owner.c
//   GET /api/match/search                match_search (sql/areas/85_search.sql): the search's
//                                        whole answer
//
// The token checks are the programs': RS256 with the public key of JWT_PUBLIC_KEY_FILE, the
// issuer and audience of JWT_ISSUER and JWT_AUDIENCE, exp and nbf with 60 s of leeway, the
// OWNER role for the owner list, and the account of (iss, sub) found or made once and then
// kept in memory. Everything else is a 404 problem, as the service's catch-all answers.
//
// Settings (environment): PORT (on 127.0.0.1), PGHOST (the socket directory), PGDATABASE,
// PGUSER, JWT_PUBLIC_KEY_FILE, JWT_ISSUER, JWT_AUDIENCE, MIN_RELIABILITY (default 50).
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const express = require('express');
const jwt = require('jsonwebtoken');
const { Pool, types } = require('pg');

// json arrives as text and is sent on as it is: the database wrote the answer
types.setTypeParser(114, (v) => v);

const pool = new Pool({ max: 16 });
const publicKey = fs.readFileSync(process.env.JWT_PUBLIC_KEY_FILE);
const verifyOptions = {
	algorithms: ['RS256'],
	issuer: process.env.JWT_ISSUER || 'https://auth.courts.local/',
	audience: process.env.JWT_AUDIENCE || 'courts-api',
	clockTolerance: 60,
};
const minReliability = Number(process.env.MIN_RELIABILITY || 50);
const accounts = new Map();

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;
const SKILLS = ['ANY', 'BEGINNER', 'INTERMEDIATE', 'ADVANCED', 'PROFESSIONAL'];

function problem(res, status, code, title, detail, errors) {
	const slug = code.toLowerCase().replace(/_/g, '-');
	res.status(status).type('application/problem+json').send(JSON.stringify({
		type: `https://courts.example/problems/${slug}`, title, status, detail,
		instance: res.req.path, code, requestId: crypto.randomBytes(8).toString('hex'),
		errors: errors || [] }));
}

function invalid(res, errors) {
	problem(res, 400, 'VALIDATION_FAILED', 'Bad Request', 'The request has invalid fields; see errors.', errors);
}

// The caller's account id, or null after answering 401 or 403.
async function caller(req, res, role) {
	const h = req.get('authorization') || '';
	let claims;
	try {
		if (!h.startsWith('Bearer ')) throw new Error('no token');
		claims = jwt.verify(h.slice(7), publicKey, verifyOptions);
		if (typeof claims.sub !== 'string' || claims.sub === '') throw new Error('no sub');
	} catch (e) {
		problem(res, 401, 'UNAUTHORIZED', 'Unauthorized', 'A valid bearer token is required.');
		return null;
	}
	if (role && !(Array.isArray(claims.roles) && claims.roles.includes(role))) {
		problem(res, 403, 'FORBIDDEN', 'Forbidden', `This needs the ${role} role.`);
		return null;
	}
	const key = claims.iss + '\n' + claims.sub;
	let id = accounts.get(key);
	for (let attempt = 0; id === undefined && attempt < 2; attempt++) {
		const r = await pool.query({ name: 'account', values: [claims.iss, claims.sub], text:
			'WITH found AS (SELECT id FROM users WHERE issuer = $1 AND subject = $2), ' +
			'ins AS (INSERT INTO users (issuer, subject) SELECT $1, $2 ' +
			'        WHERE NOT EXISTS (SELECT 1 FROM found) ' +
			'        ON CONFLICT (issuer, subject) DO NOTHING RETURNING id) ' +
			'SELECT id FROM found UNION ALL SELECT id FROM ins' });
		if (r.rows.length > 0) {
			id = r.rows[0].id;
			accounts.set(key, id);
		}
	}
	return id;
}

// An async handler whose failure is a 500 problem, not an unanswered request.
function route(f) {
	return (req, res) => f(req, res).catch((e) => {
		console.error(`express: ${req.method} ${req.path}: ${e.message}`);
		if (!res.headersSent) problem(res, 500, 'INTERNAL_ERROR', 'Internal Server Error', 'Something failed.');
	});
}

const app = express();
app.disable('x-powered-by');
app.disable('etag');

app.get('/actuator/health', route(async (req, res) => {
	await pool.query({ name: 'health', text: 'SELECT 1' });
	res.type('application/json').send('{"status":"UP"}');
}));

app.get('/api/resources/:id/slots', route(async (req, res) => {
	const date = req.query.date;
	const errors = [];
	if (!UUID.test(req.params.id)) errors.push({ field: 'id', message: 'must be a UUID' });
	if (typeof date !== 'string' || !DATE.test(date)) errors.push({ field: 'date', message: 'must be a date' });
	if (errors.length) return invalid(res, errors);
	const r = await pool.query({ name: 'slots', values: [req.params.id, date], text:
		"WITH c AS (SELECT x.id, " +
		"                  x.status = 'ACTIVE' AND v.status = 'ACTIVE' AS visible, " +
		"                  $2::date > (now() AT TIME ZONE v.timezone)::date + 366 AS too_far " +
		"             FROM resources x JOIN venues v ON v.id = x.venue_id " +
		"            WHERE x.id = $1::uuid) " +
		"SELECT c.visible, c.too_far, " +
		"       CASE WHEN c.visible AND NOT c.too_far THEN " +
		"           (SELECT COALESCE(json_agg(json_build_object( " +
		"                       'startTime', api_time(s.start_time), " +
		"                       'endTime', api_time(s.end_time), " +
		"                       'available', s.available, " +
		"                       'price', s.price, " +
		"                       'currency', s.currency) ORDER BY s.start_time), '[]') " +
		"              FROM resource_slots(c.id, $2::date) s) END AS slots " +
		"FROM c" });
	if (r.rows.length === 0 || !r.rows[0].visible)
		return problem(res, 404, 'NOT_FOUND', 'Not Found', 'Resource not found.');
	if (r.rows[0].too_far) return invalid(res, [{ field: 'date', message: 'must be at most 366 days ahead' }]);
	res.type('application/json').send(r.rows[0].slots);
}));

app.get('/api/owner/venues', route(async (req, res) => {
	const id = await caller(req, res, 'OWNER');
	if (!id) return;
	// the first page, of the programs' default size (100), and one more to know of a next
	// the venues the caller owns and those it staffs, each with the caller's role (myRole)
	const r = await pool.query({ name: 'owner', values: [id, true, 101, null], text:
		"SELECT json_member_add(d.doc, 'myRole', to_json(s.role)) AS doc, " +
		"       json_build_array((s.v).created_at, (s.v).id) AS key " +
		"  FROM (SELECT x.v, x.role FROM (" +
		"            SELECT v, 'OWNER' AS role FROM venues v " +
		"             WHERE $2::boolean AND v.owner_id = $1::uuid " +
		"            UNION ALL " +
		"            SELECT v, st.role FROM venue_staff st JOIN venues v ON v.id = st.venue_id " +
		"             WHERE st.user_id = $1::uuid " +
		"               AND NOT ($2::boolean AND v.owner_id = $1::uuid)) x " +
		"         WHERE $4::json IS NULL OR ((x.v).created_at, (x.v).id) > " +
		"               (($4::json->>0)::timestamptz, ($4::json->>1)::uuid) " +
		"         ORDER BY (x.v).created_at, (x.v).id LIMIT $3::int) s " +
		" CROSS JOIN LATERAL venue_doc(s.v) d " +
		" ORDER BY (s.v).created_at, (s.v).id" });
	if (r.rows.length > 100)
		res.set('Link', `</api/owner/venues?cursor=${encodeURIComponent(Buffer.from(r.rows[99].key).toString('base64url'))}>; rel="next"`);
	res.type('application/json').send('[' + r.rows.slice(0, 100).map((x) => x.doc).join(',') + ']');
}));

app.get('/api/match/search', route(async (req, res) => {
	const id = await caller(req, res, null);
	if (!id) return;
	const q = req.query;
	const errors = [];
	const num = (v, dflt) => (v === undefined ? dflt : Number(v));
	const lat = num(q.lat, NaN), lng = num(q.lng, NaN), radius = num(q.radiusKm, 10);
	const duration = num(q.slotDurationMinutes, 90), limit = num(q.limit, 50);
	const skill = q.skillLevel === undefined ? 'ANY' : q.skillLevel;
	if (!(lat >= -90 && lat <= 90)) errors.push({ field: 'lat', message: 'must be between -90 and 90' });
	if (!(lng >= -180 && lng <= 180)) errors.push({ field: 'lng', message: 'must be between -180 and 180' });
	if (!(radius > 0 && radius <= 100)) errors.push({ field: 'radiusKm', message: 'must be greater than 0 and at most 100' });
	if (typeof q.date !== 'string' || !DATE.test(q.date)) errors.push({ field: 'date', message: 'must be a date' });
	if (typeof q.startTimeFrom !== 'string' || !TIME.test(q.startTimeFrom)) errors.push({ field: 'startTimeFrom', message: 'must be a time' });
	if (typeof q.startTimeTo !== 'string' || !TIME.test(q.startTimeTo)) errors.push({ field: 'startTimeTo', message: 'must be a time' });
	if (!(Number.isInteger(duration) && duration >= 15 && duration <= 240)) errors.push({ field: 'slotDurationMinutes', message: 'must be between 15 and 240' });
	if (!SKILLS.includes(skill)) errors.push({ field: 'skillLevel', message: 'is not a skill level' });
	if (!(Number.isInteger(limit) && limit >= 1 && limit <= 200)) errors.push({ field: 'limit', message: 'must be between 1 and 200' });
	if (errors.length) return invalid(res, errors);
	const r = await pool.query({ name: 'search', text:
		'SELECT date_ok, results FROM match_search($1::float8, $2::float8, $3::numeric, ' +
		'$4::date, $5::time, $6::time, $7::int, $8, $9::int, $10::uuid, $11::int)',
		values: [lat, lng, radius, q.date, q.startTimeFrom, q.startTimeTo, duration, skill,
			minReliability, id, limit] });
	if (!r.rows[0].date_ok) return invalid(res, [{ field: 'date', message: 'must be at most 366 days ahead' }]);
	res.type('application/json').send(r.rows[0].results);
}));

app.use((req, res) => problem(res, 404, 'NOT_FOUND', 'Not Found', 'No such endpoint.'));

const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
