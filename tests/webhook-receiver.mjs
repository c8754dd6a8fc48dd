// A webhook receiver for tests/59-deliver.bats, checking what a real one would:
//   node tests/webhook-receiver.mjs SECRET DIR
// listens on 127.0.0.1 (a port of the system's choosing, written to DIR/port) and, for each
// request, appends one JSON line to DIR/received.jsonl: the Idempotency-Key, the attempt,
// whether Courts-Signature verifies (HMAC-SHA256 of "<t>.<body>" with SECRET, t within five
// minutes), the method, path, the connection (its client port), Content-Type and the body. It answers as DIR/mode says when
// the request arrives:
//   ok     200          fail   500          slow   200 after 300 ms
//   stall  no answer (the deliverer's timeout ends it)
//   turns  500, no answer, 200, 500, no answer, 200, ... (one after another, over requests)
// Stopped by its PID.
import { createServer } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';

const [secret, dir] = process.argv.slice(2);
let turn = 0;

// the check a receiver copies: the signed timestamp is recent, and the MAC matches
function signatureOk(header, body) {
	const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header || '');
	if (!m || Math.abs(Date.now() / 1000 - Number(m[1])) > 300)
		return false;
	const want = createHmac('sha256', secret).update(`${m[1]}.`).update(body).digest();
	return timingSafeEqual(want, Buffer.from(m[2], 'hex'));
}

const server = createServer((req, res) => {
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', () => {
		const body = Buffer.concat(chunks);
		let mode = readFileSync(`${dir}/mode`, 'utf8').trim();
		if (mode === 'turns')
			mode = ['fail', 'stall', 'ok'][turn++ % 3];
		let parsed = null;
		try { parsed = JSON.parse(body); } catch { /* recorded as null */ }
		appendFileSync(`${dir}/received.jsonl`, JSON.stringify({
			id: req.headers['idempotency-key'] ?? null,
			attempt: Number(req.headers['courts-delivery-attempt']),
			signatureOk: signatureOk(req.headers['courts-signature'], body),
			method: req.method,
			url: req.url,
			connection: req.socket.remotePort,
			contentType: req.headers['content-type'] ?? null,
			answer: mode,
			body: parsed,
		}) + '\n');
		if (mode === 'stall') {
			setTimeout(() => res.destroy(), 30000);
			return;
		}
		const status = mode === 'fail' ? 500 : 200;
		setTimeout(() => { res.writeHead(status); res.end(); }, mode === 'slow' ? 300 : 0);
	});
});
server.listen(0, '127.0.0.1', () => writeFileSync(`${dir}/port`, String(server.address().port)));
