// A FastCGI client that connects first and asks later, for tests/07-pool.bats:
//   node tests/fcgi-client.mjs SOCKET DIR PATH
// connects to the program's SOCKET and writes DIR/connected; waits until DIR/go exists, then
// sends GET PATH (BEGIN_REQUEST, PARAMS, empty STDIN) and writes what the program answered on
// its STDOUT to DIR/answer. Exits 0 when the program ended the request (END_REQUEST), 1 when
// the connection closed before that.
import { createConnection } from 'node:net';
import { existsSync, writeFileSync } from 'node:fs';

const [socket, dir, path] = process.argv.slice(2);
const BEGIN_REQUEST = 1, END_REQUEST = 3, PARAMS = 4, STDIN = 5, STDOUT = 6;

function record(type, content) {
	const head = Buffer.alloc(8);
	head.writeUInt8(1, 0);			// version
	head.writeUInt8(type, 1);
	head.writeUInt16BE(1, 2);		// request id
	head.writeUInt16BE(content.length, 4);
	return Buffer.concat([head, content]);
}

function pair(name, value) {		// names and values under 128 bytes
	return Buffer.concat([Buffer.from([name.length, value.length]), Buffer.from(name + value)]);
}

const params = Buffer.concat([pair('REQUEST_METHOD', 'GET'), pair('REQUEST_URI', path),
	pair('SERVER_PROTOCOL', 'HTTP/1.1')]);
let input = Buffer.alloc(0), stdout = Buffer.alloc(0), ended = false;

const conn = createConnection(socket, () => {
	writeFileSync(`${dir}/connected`, '');
	const timer = setInterval(() => {
		if (!existsSync(`${dir}/go`))
			return;
		clearInterval(timer);
		const begin = Buffer.from([0, 1, 0, 0, 0, 0, 0, 0]);	// RESPONDER, no keep-alive
		conn.write(Buffer.concat([record(BEGIN_REQUEST, begin), record(PARAMS, params),
			record(PARAMS, Buffer.alloc(0)), record(STDIN, Buffer.alloc(0))]));
	}, 10);
});
conn.on('data', (chunk) => {
	input = Buffer.concat([input, chunk]);
	while (input.length >= 8) {
		const type = input.readUInt8(1), len = input.readUInt16BE(4), pad = input.readUInt8(6);
		if (input.length < 8 + len + pad)
			break;
		if (type === STDOUT)
			stdout = Buffer.concat([stdout, input.subarray(8, 8 + len)]);
		else if (type === END_REQUEST)
			ended = true;
		input = input.subarray(8 + len + pad);
	}
});
conn.on('error', (e) => console.error(`fcgi-client: ${e.message}`));
conn.on('close', () => {
	writeFileSync(`${dir}/answer`, stdout);
	if (!ended)
		console.error('fcgi-client: the connection closed before the end of the request');
	process.exit(ended ? 0 : 1);
});
