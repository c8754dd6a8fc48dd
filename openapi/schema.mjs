// schema.mjs: the document's schemas as JSON Schema 2020-12 validators (ajv), shared by
// lint.mjs and check-responses.mjs.
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const unescape = (s) => s.replaceAll('~1', '/').replaceAll('~0', '~');
const pointer = (root, path) => path.split('/').slice(1).reduce((s, k) => s?.[unescape(k)], root);

// compiler(doc).validate(schema, at) -> (value) => null when it holds, else the first error
// as "at INSTANCE_PATH: MESSAGE (schema POINTER)", POINTER into the document: under `at` (the
// pointer of schema itself) or under the component schema the failing keyword is in.
export function compiler(doc) {
	const ajv = new Ajv2020({ strict: true, allErrors: false, validateFormats: true });
	addFormats(ajv);
	// OpenAPI's own keywords that may stand in a schema
	ajv.addKeyword({ keyword: 'example' });
	const defs = doc.components.schemas;
	const rebase = (s) => JSON.parse(JSON.stringify(s)
		.replaceAll('"#/components/schemas/', '"openapi.json#/$defs/'));
	ajv.addSchema({ $id: 'openapi.json', $defs: rebase(defs) });
	const cache = new Map();

	// the component schema an instance path leads into, following $ref, properties and items
	function component(schema, instancePath) {
		let name = null;
		const deref = (s) => {
			while (s?.$ref && !s.properties) {
				name = s.$ref.split('/').pop();
				s = defs[name];
			}
			return s;
		};
		let s = deref(schema);
		if (s?.$ref)	// a $ref with keywords beside it (the problem answers)
			s = { ...defs[s.$ref.split('/').pop()], properties: { ...defs[s.$ref.split('/').pop()].properties, ...s.properties } };
		for (const seg of instancePath.split('/').slice(1)) {
			if (s?.items)
				s = deref(s.items);
			else if (s?.properties?.[unescape(seg)])
				s = deref(s.properties[unescape(seg)]);
			else
				break;
		}
		return name;
	}

	return {
		validate(schema, at = '#') {
			const key = JSON.stringify(schema);
			let fn = cache.get(key);
			if (!fn) {
				fn = ajv.compile(rebase(schema));
				cache.set(key, fn);
			}
			return (value) => {
				if (fn(value))
					return null;
				const e = fn.errors[0];
				const extra = e.params && Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : '';
				const keyword = e.schemaPath.replace(/^#/, '');
				const inRoot = !e.schemaPath.startsWith('openapi.json') && pointer(schema, keyword) !== undefined;
				const name = inRoot ? null : component(schema, e.instancePath);
				const where = e.schemaPath.startsWith('openapi.json#/$defs/')
					? e.schemaPath.replace('openapi.json#/$defs/', '#/components/schemas/')
					: name !== null ? `#/components/schemas/${name}${keyword}` : `${at}${keyword}`;
				return `at ${e.instancePath || '/'}: ${e.message}${extra} (schema ${where})`;
			};
		},
	};
}
