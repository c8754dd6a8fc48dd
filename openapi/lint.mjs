// lint.mjs: the document is valid OpenAPI 3.1, and its schemas and examples hold.
//
//   node openapi/lint.mjs OPENAPI_JSON
//
// 1. the document against the OpenAPI 3.1 schema (@seriousme/openapi-schema-validator);
// 2. every schema compiles under JSON Schema 2020-12 in strict mode (ajv), so a typo in a
//    keyword is an error, not a schema that silently accepts everything;
// 3. every example in a response validates against that response's schema.
// Prints one line per problem and exits 1 if there is any.
import { readFileSync } from 'node:fs';

import { Validator } from '@seriousme/openapi-schema-validator';

import { compiler } from './schema.mjs';

const file = process.argv[2];
const doc = JSON.parse(readFileSync(file, 'utf8'));
const failures = [];

const validator = new Validator();
const res = await validator.validate(doc);
if (!res.valid)
	for (const e of [].concat(res.errors))
		failures.push(`OpenAPI 3.1: ${e.instancePath ?? ''} ${e.message ?? JSON.stringify(e)}`);
if (doc.openapi !== '3.1.0')
	failures.push(`openapi is ${doc.openapi}, not 3.1.0`);

const { validate } = compiler(doc);
let schemas = 0, examples = 0;
for (const [path, item] of Object.entries(doc.paths))
	for (const [method, op] of Object.entries(item))
		for (const [status, response] of Object.entries(op.responses)) {
			const r = response.$ref ? doc.components.responses[response.$ref.split('/').pop()] : response;
			for (const [type, media] of Object.entries(r.content ?? {})) {
				const where = `${method.toUpperCase()} ${path} ${status} ${type}`;
				let check;
				try {
					check = validate(media.schema);
					schemas++;
				} catch (e) {
					failures.push(`${where}: schema does not compile: ${e.message}`);
					continue;
				}
				if (media.example === undefined)
					continue;
				examples++;
				const errors = check(media.example);
				if (errors)
					failures.push(`${where}: example fails ${errors}`);
			}
		}

for (const f of failures)
	console.log(f);
console.log(`openapi lint: OpenAPI ${doc.openapi} ${res.valid ? 'valid' : 'INVALID'}, ${schemas} response schemas compiled, ${examples} examples checked, ${failures.length} problems`);
process.exit(failures.length > 0 ? 1 : 0);
