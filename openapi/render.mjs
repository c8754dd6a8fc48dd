// render.mjs: opens the API's page in headless Chromium as a person would, and says whether
// it rendered: no console error, no failed or refused request, and every operation of the
// document shown with its method and path. Keeps a screenshot of the whole page.
//
//   node openapi/render.mjs PAGE_URL OPENAPI_JSON SCREENSHOT_PNG
//
// Chromium is Debian's (/usr/bin/chromium, or $CHROMIUM); puppeteer-core drives it and
// downloads no browser of its own. Its profile goes to $CHROMIUM_PROFILE, or a new temporary
// directory. Prints one line per problem, then a summary; exit 1 if any.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import puppeteer from 'puppeteer-core';

const [url, docFile, shot] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(docFile, 'utf8'));
const problems = [];
const ownProfile = process.env.CHROMIUM_PROFILE ? null : mkdtempSync(join(tmpdir(), 'courts-chromium-'));

const browser = await puppeteer.launch({
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	// root has no sandbox to drop into; the page is our own, served on loopback
	args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
		`--user-data-dir=${process.env.CHROMIUM_PROFILE || ownProfile}`],
});
try {
	const page = await browser.newPage();
	page.on('console', (m) => {
		if (m.type() === 'error')
			problems.push(`console error: ${m.text()}`);
	});
	page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
	page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
	page.on('response', (r) => {
		if (r.status() >= 400)
			problems.push(`answer ${r.status()}: ${r.url()}`);
	});
	await page.setViewport({ width: 1280, height: 900 });
	const answer = await page.goto(url, { waitUntil: 'networkidle0', timeout: 60000 });
	if (answer.headers()['content-type']?.split(';')[0] !== 'text/html')
		problems.push(`the page is ${answer.headers()['content-type']}, not text/html`);
	await page.waitForSelector('.opblock-summary-path', { timeout: 30000 });
	const shown = await page.$$eval('.opblock', (blocks) => blocks.map((b) => [
		b.querySelector('.opblock-summary-method')?.textContent.trim().toUpperCase(),
		b.querySelector('.opblock-summary-path')?.getAttribute('data-path'),
	].join(' ')));
	const title = await page.$eval('.info .title', (e) => e.textContent).catch(() => '');
	if (!title.includes(doc.info.title))
		problems.push(`the title "${doc.info.title}" is not shown (got "${title}")`);
	const want = Object.entries(doc.paths).flatMap(([path, item]) =>
		Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
	for (const op of want)
		if (!shown.includes(op))
			problems.push(`not shown: ${op}`);
	for (const op of shown)
		if (!want.includes(op))
			problems.push(`shown but not in the document: ${op}`);
	await page.screenshot({ path: shot, fullPage: true });
	for (const p of problems)
		console.log(p);
	console.log(`# page ${url}: ${shown.length} operations shown of ${want.length}, ${problems.length} problems; screenshot ${shot}`);
} finally {
	await browser.close();
	if (ownProfile !== null)
		rmSync(ownProfile, { recursive: true, force: true });
}
process.exit(problems.length > 0 ? 1 : 0);
