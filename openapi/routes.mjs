// routes.mjs: the route tables of the programs, read from cgi-bin/*.c.
//
// Each program ends with `static const struct route routes[] = { { METHOD, PATTERN, handler,
// AUTH_x, flags }, ... };` (common/route.h). This reads those entries as they are written, so
// the document built from them (build.mjs) and the check of it (tests/95-openapi.bats) follow
// the code, never a copy of it.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ENTRY = /\{\s*"([A-Z]+)",\s*"([^"]+)",\s*([a-z_0-9]+),\s*(AUTH_[A-Z]+),\s*([A-Z_|\s]+?)\s*\}/g;

// [{ program, method, pattern, path, handler, auth, body, raw, idempotent, staff, params, comment }]
export function readRoutes(root) {
	const dir = join(root, 'cgi-bin');
	const routes = [];
	for (const file of readdirSync(dir).filter((f) => f.endsWith('.c')).sort()) {
		const src = readFileSync(join(dir, file), 'utf8');
		const table = src.match(/static const struct route routes\[\] = \{([\s\S]*?)\n\};/);
		if (table === null)
			throw new Error(`cgi-bin/${file}: no route table`);
		for (const [, method, pattern, handler, auth, flags] of table[1].matchAll(ENTRY)) {
			const params = [...pattern.matchAll(/\{([A-Za-z]+)(?::([a-z]+))?\}/g)]
				.map(([, name, kind]) => ({ name, kind: kind ?? 'uuid' }));
			// the handler's header comment (method, path, statuses; STYLE.md), as prose
			const comment = src.match(new RegExp(`/\\*((?:(?!\\*/)[\\s\\S])*)\\*/\\s*static void\\s+${handler}\\(`));
			routes.push({
				comment: comment === null ? null : comment[1].replace(/\n\s*\* ?/g, ' ').replace(/\s+/g, ' ').trim(),
				program: file.replace(/\.c$/, ''),
				method,
				pattern,
				path: pattern.replace(/\{([A-Za-z]+):[a-z]+\}/g, '{$1}'),
				handler,
				auth: auth.replace(/^AUTH_/, ''),
				body: /\bBODY_(JSON|OPTIONAL|RAW)\b/.test(flags),
				raw: /\bBODY_RAW\b/.test(flags),
				bodyOptional: /\bBODY_OPTIONAL\b/.test(flags),
				idempotent: /\bROUTE_IDEMPOTENT\b/.test(flags),
				staff: /\bSTAFF_DESK\b/.test(flags) ? 'DESK' : /\bSTAFF_MANAGER\b/.test(flags) ? 'MANAGER' : null,
				params,
			});
		}
	}
	return routes;
}
