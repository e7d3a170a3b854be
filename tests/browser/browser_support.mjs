// What the browser tests and the first-paint benchmark share: `strata up` as a child process
// on a kernel-chosen port, and playwright-core driving Debian's Chromium.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export const chromiumPath = process.env.STRATA_CHROMIUM || '/usr/bin/chromium';

// playwright-core from the build's vendored web packages (the dashboard's `npm ci` installs the
// devDependencies there too) or from web/node_modules; null when neither has it.
export function loadPlaywright(binaryDir, sourceDir) {
  for (const dir of [path.join(binaryDir, 'web-vendor'), path.join(sourceDir, 'web')]) {
    try {
      return createRequire(path.join(dir, 'package.json'))('playwright-core');
    } catch { /* try the next place */ }
  }
  return null;
}

// Why the browser cannot run here, or null when it can.
export function missingBrowser(playwright) {
  if (!fs.existsSync(chromiumPath)) {
    return `${chromiumPath} not found: install Debian's chromium package (make deps)`;
  }
  if (!playwright) return 'playwright-core not found: run `npm ci` in web/ (make deps)';
  return null;
}

// What every browser test starts from: the build and source directories (CTest sets them), the
// strata binary, playwright-core, and the screenshots' folder (created). Exits 77, the code CTest
// reads as skipped, when Chromium or playwright-core is missing.
export function browserTestEnvironment() {
  const binaryDir = process.env.STRATA_BINARY_DIR || '.';
  const sourceDir = process.env.STRATA_SOURCE_DIR || '.';
  const playwright = loadPlaywright(binaryDir, sourceDir);
  const missing = missingBrowser(playwright);
  if (missing) {
    console.log(`SKIP: ${missing}`);
    process.exit(77);
  }
  const artifacts = path.join(binaryDir, 'browser-artifacts');
  fs.mkdirSync(artifacts, { recursive: true });
  return { sourceDir, strata: path.join(binaryDir, 'bin', 'strata'), playwright, artifacts };
}

// Launches Chromium with one page of `width` x `height` pixels whose script errors are logged;
// resolves with {browser, page}.
export async function openPage(playwright, width, height) {
  const browser = await playwright.chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width, height } });
  page.on('pageerror', (error) => console.log(`page error: ${error.message}`));
  return { browser, page };
}

// Opens the dashboard of `up` (startStrataUp's result) in `page` with its admin credential, as
// a user does with the address strata up prints: the token is kept for the tab's session and
// dropped from the address.
export async function signIn(page, up) {
  await page.goto(`${up.url}/?token=${up.token}`);
  await page.waitForFunction(() => !location.search.includes('token='));
}

// Starts `strata up ARGS...` and resolves with {url, child, token} once it prints its address
// (and with `gateway` too, its gateway's address, when ARGS has --gateway-listen); `token` is
// the admin credential it keeps in its --data-dir. Rejects (with the process stopped) when it
// exits or stays silent for a minute first.
export function startStrataUp(strata, args, logPath) {
  const withGateway = args.includes('--gateway-listen');
  return new Promise((resolve, reject) => {
    const child = spawn(strata, ['up', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const log = fs.createWriteStream(logPath);
    let seen = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`strata up did not announce its address within 60 s:\n${seen}`));
    }, 60000);
    const onData = (data) => {
      log.write(data);
      seen += data.toString();
      const match = /API listening on (http:\/\/\S+)\s/.exec(seen);
      const gateway = /gateway listening on (http:\/\/\S+)\s/.exec(seen);
      if (match && (gateway || !withGateway)) {
        clearTimeout(timer);
        const dataDir = args[args.indexOf('--data-dir') + 1];
        const token = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
        resolve({ url: match[1], gateway: gateway?.[1], child, token });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`strata up exited with ${code}:\n${seen}`));
    });
  });
}

// Stops a child with SIGTERM and waits for it to end.
export function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

// The headers of a request as the admin of `up` (startStrataUp's result).
export function adminHeaders(up) {
  return { Authorization: `Bearer ${up.token}` };
}

// Applies YAML manifests through the API's apply endpoint of `up` (startStrataUp's result);
// throws with the server's answer.
export async function apply(up, yaml) {
  const response = await fetch(`${up.url}/apis/strata.dev/v1alpha1/apply`, {
    method: 'POST', headers: { 'Content-Type': 'application/yaml', ...adminHeaders(up) }, body: yaml,
  });
  if (!response.ok) throw new Error(`apply: ${response.status} ${await response.text()}`);
}
