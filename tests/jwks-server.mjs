// A stand-in for an identity provider's JWKS URL, for tests/58-jwks.bats:
//   node tests/jwks-server.mjs DOC_FILE PORT_FILE
// listens on 127.0.0.1 (a port of the system's choosing, written to PORT_FILE) and answers
//   /ok     200 with DOC_FILE as it is now (application/json)
//   /fail   500
//   /stall  nothing, ever (the refresher's timeout ends it)
//   /big    200 with 2 MiB of JSON, over the refresher's 1 MiB limit
// Stopped by its PID.
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';

const [docFile, portFile] = process.argv.slice(2);

const server = createServer((req, res) => {
	switch (req.url) {
	case '/ok':
		res.writeHead(200, { 'Content-Type': 'application/json' });
		res.end(readFileSync(docFile));
		break;
	case '/fail':
		res.writeHead(500, { 'Content-Type': 'text/plain' });
		res.end('the provider is down\n');
		break;
	case '/stall':
		break;
	case '/big':
		res.writeHead(200, { 'Content-Type': 'application/json' });
		res.end(`{"keys":[],"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`);
		break;
	default:
		res.writeHead(404);
		res.end();
	}
});
server.listen(0, '127.0.0.1', () => writeFileSync(portFile, String(server.address().port)));
