// Inference services end to end: the real `strata up` (simulated GPUs, so replicas run
// `strata engine-sim` in place of vLLM, with a start-up delay) with its gateway, driven by the
// official openai client. Checks what the platform promises a service: scale-up under load,
// drains that lose no stream, scale to zero and back through the activator, a 9:1 version
// split, a replica killed mid-stream, a rolling update under load, a replica spanning two nodes
// (LeaderWorkerSet's environment, restarted as one group), a GAIE InferencePool's served model
// name and objectives, and the KServe example. Everything binds port 0.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The openai client is installed (locked) by the gateway tests' package.
const require = createRequire(path.join(process.env.OPENAI_PACKAGE_DIR, 'package.json'));
const OpenAI = require('openai').default ?? require('openai');

const strata = process.env.STRATA_BIN;
const source = process.env.STRATA_SOURCE_DIR;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-serving-'));
const STARTUP_DELAY_S = 2;
let up;
let api;
let client;
let gatewayURL;
let log = '';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls `check` until it returns a truthy value or `seconds` pass; the value, or a failure
// naming `what` with the last value seen.
async function waitFor(what, check, seconds = 90) {
  const deadline = Date.now() + seconds * 1000;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await sleep(200);
  }
  assert.fail(`gave up waiting for ${what} after ${seconds} s; last: ${JSON.stringify(last)}\n${log.slice(-3000)}`);
}

function cli(...args) {
  const run = spawnSync(strata, [...args, '--server', api], { encoding: 'utf8' });
  assert.equal(run.status, 0, `strata ${args.join(' ')}: ${run.stdout}${run.stderr}`);
  return run.stdout;
}

function applyYaml(name, yaml) {
  const file = path.join(dataDir, `${name}.yaml`);
  fs.writeFileSync(file, yaml);
  cli('apply', '-f', file);
}

// strata up's admin credential, from its data dir (the CLI finds it by itself), and strata's
// own form of pods (their owner and GPUs), as the CLI and the dashboard ask for it.
const adminHeaders = () => ({
  Accept: 'application/json;g=strata.dev;v=v1alpha1',
  Authorization: `Bearer ${fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim()}`,
});

async function getJson(url) {
  const response = await fetch(url, { headers: adminHeaders() });
  assert.equal(response.status, 200, `${url}: ${response.status}`);
  return response.json();
}

const service = (name) =>
  getJson(`${api}/apis/strata.dev/v1alpha1/namespaces/default/services/${name}`);

// The service's pods that hold a node and are not finished.
async function livePods(name) {
  const list = await getJson(`${api}/api/v1/namespaces/default/pods`);
  return list.items.filter((pod) => pod.spec?.owner?.kind === 'Service' && pod.spec.owner.name === name &&
    pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed');
}

const readyCount = async (name) => (await service(name)).status?.readyReplicas ?? 0;

// One streamed chat completion; resolves with its text and finish reason, or rejects.
async function streamChat(model, maxTokens) {
  const stream = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Tell me about GPUs.' }], max_tokens: maxTokens, stream: true,
  });
  let text = '';
  let finish = null;
  let chunks = 0;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    text += choice.delta?.content ?? '';
    if (choice.finish_reason) finish = choice.finish_reason;
    ++chunks;
  }
  return { text, finish, chunks };
}

// `count` clients streaming chat completions of `maxTokens` back to back until stop() resolves;
// every response and every error lands in `results` and `failures` (shared across calls).
function streamingClients(model, count, maxTokens, results, failures) {
  let on = true;
  const clients = Array.from({ length: count }, async () => {
    while (on) {
      try {
        results.push(await streamChat(model, maxTokens));
      } catch (error) {
        failures.push(String(error));
      }
    }
  });
  return { stop: () => { on = false; return Promise.all(clients); } };
}

before(async () => {
  up = spawn(strata, ['up', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--gateway-listen', '127.0.0.1:0',
    '--simulate', '3x4:H100-80GB', '--sim-startup-delay', String(STARTUP_DELAY_S), '--drain-grace', '30'],
  { stdio: ['ignore', 'pipe', 'pipe'] });
  up.stderr.on('data', (d) => { log += d.toString(); });
  await new Promise((resolve, reject) => {
    up.stdout.on('data', (d) => {
      log += d.toString();
      const apiMatch = log.match(/API listening on (http:\/\/\S+)/);
      const gatewayMatch = log.match(/gateway listening on (http:\/\/\S+)/);
      if (apiMatch && gatewayMatch) {
        api = apiMatch[1];
        gatewayURL = gatewayMatch[1];
        resolve();
      }
    });
    up.on('exit', (code) => reject(new Error(`strata up exited with ${code}:\n${log}`)));
  });
  client = new OpenAI({ baseURL: `${gatewayURL}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120000 });
});

after(async () => {
  // strata up leaves its pods' processes running when it stops (a restarted agent adopts them),
  // so the services go first, and with them every engine process.
  if (up && up.exitCode === null && api) {
    const services = await getJson(`${api}/apis/strata.dev/v1alpha1/namespaces/default/services`);
    for (const item of services.items) cli('delete', 'service', item.metadata.name);
    const deadline = Date.now() + 60000;
    while (Date.now() < deadline) {
      const pods = await getJson(`${api}/api/v1/namespaces/default/pods`);
      if (pods.items.every((pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed')) break;
      await sleep(200);
    }
  }
  if (up && up.exitCode === null) {
    up.kill('SIGTERM');
    await new Promise((resolve) => up.on('exit', resolve));
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a TP=2 service scales from zero, up under load, drains without losing a stream, and back to zero', async () => {
  applyYaml('tp2', `
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: tp2, labels: {team: search}}
spec:
  model: tp2-chat
  engine: {command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --served-model-name, tp2-chat]}
  resources: {cpu: "2", memory: 8Gi, gpu: 2}
  tensorParallel: 2
  minReplicas: 0
  maxReplicas: 3
  autoscaling: {metric: concurrency, target: 4, stableWindow: 6s, panicWindow: 2s, scaleToZeroAfter: 8s}
`);
  // The gateway lists the model as soon as the serving loop, woken by the change, has seen the
  // service: with no replica yet.
  await waitFor('the model in the gateway', async () =>
    (await client.models.list()).data.some((m) => m.id === 'tp2-chat') || null, 30);
  // From zero: the first request waits in the gateway (activator) while a replica starts.
  const started = Date.now();
  const first = await streamChat('tp2-chat', 8);
  const coldStart = (Date.now() - started) / 1000;
  assert.ok(first.finish, 'the first request completes');
  console.log(`# first request from zero served after ${coldStart.toFixed(1)} s (engine start-up ${STARTUP_DELAY_S} s)`);
  const pods = await livePods('tp2');
  assert.equal(pods.length, 1);
  assert.equal(pods[0].spec.assignedGpus.length, 2, 'TP=2: two GPUs on one node');

  // Load: 24 clients streaming back to back, against a target of 4 per replica.
  const results = [];
  const failures = [];
  const load = streamingClients('tp2-chat', 24, 64, results, failures);
  const scaled = await waitFor('scale-up to more than one replica', async () =>
    ((await service('tp2')).status?.versions?.[0]?.desiredReplicas ?? 0) > 1 ? true : null, 60);
  assert.ok(scaled);
  await waitFor('a second ready replica', async () => (await readyCount('tp2')) >= 2 || null, 60);
  // Load drops to two slow clients: the surplus replicas drain while streams are open on them.
  await load.stop();
  const slow = streamingClients('tp2-chat', 2, 200, results, failures);
  await waitFor('scale-down to one replica', async () => (await livePods('tp2')).length === 1 || null, 90);
  await slow.stop();
  assert.deepEqual(failures, [], 'no client saw an error');
  for (const result of results) assert.ok(result.finish, 'every stream ended with a finish reason');
  const status = (await service('tp2')).status;
  assert.ok(status.decisions.some((d) => d.to < d.from), 'a scale-down decision is recorded');

  // Idle: the service goes to zero, and the next request brings a replica back.
  await waitFor('scale to zero', async () => (await livePods('tp2')).length === 0 || null, 90);
  const again = await streamChat('tp2-chat', 8);
  assert.ok(again.finish);
  cli('delete', 'service', 'tp2');
  await waitFor('the deleted service\'s pods to go', async () => (await livePods('tp2')).length === 0 || null, 60);
});

test('a 9:1 version split lands within 2 % over 10,000 requests', async () => {
  applyYaml('split', `
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: split}
spec:
  model: split-chat
  versions: [{name: bf16, weight: 90}, {name: fp8, weight: 10}]
  engine: {command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]}
  resources: {cpu: "1", memory: 4Gi, gpu: 1}
  minReplicas: 1
  maxReplicas: 1
`);
  await waitFor('both versions ready', async () => {
    const versions = (await service('split')).status?.versions ?? [];
    return versions.length === 2 && versions.every((v) => v.readyReplicas === 1) || null;
  });
  await waitFor('both versions routed', async () => {
    try {
      await client.completions.create({ model: 'split-chat', prompt: 'x', max_tokens: 1 });
      return true;
    } catch {
      return null;
    }
  });
  const counts = async () => {
    const text = await (await fetch(`${gatewayURL}/metrics`)).text();
    const out = { bf16: 0, fp8: 0 };
    for (const line of text.split('\n')) {
      const match = line.match(/^strata_gateway_requests_total\{[^}]*model="split-chat"[^}]*version="(\w+)"[^}]*\} (\d+)/);
      if (match) out[match[1]] += Number(match[2]);
    }
    return out;
  };
  // The gateway counts a request as it finishes, just after the client has its answer: wait
  // until the probes above are counted.
  let before_ = await counts();
  for (;;) {
    await sleep(300);
    const now = await counts();
    if (now.bf16 === before_.bf16 && now.fp8 === before_.fp8) break;
    before_ = now;
  }
  const total = 10000;
  let next = 0;
  const worker = async () => {
    while (next < total) {
      ++next;
      await client.completions.create({ model: 'split-chat', prompt: 'x', max_tokens: 1 });
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const after_ = await waitFor('every request counted', async () => {
    const now = await counts();
    return now.bf16 - before_.bf16 + now.fp8 - before_.fp8 >= total ? now : null;
  }, 30);
  const bf16 = after_.bf16 - before_.bf16;
  const fp8 = after_.fp8 - before_.fp8;
  assert.equal(bf16 + fp8, total);
  const share = bf16 / total;
  console.log(`# split: bf16 ${bf16}, fp8 ${fp8} (${(share * 100).toFixed(2)} % bf16)`);
  assert.ok(Math.abs(share - 0.9) <= 0.02, `bf16 share ${share}`);
  cli('delete', 'service', 'split');
});

test('a replica killed mid-stream: requests not yet started go elsewhere, and the replica is replaced', async () => {
  applyYaml('pair', `
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: pair}
spec:
  model: pair-chat
  engine: {command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]}
  resources: {cpu: "1", memory: 4Gi, gpu: 1}
  minReplicas: 2
  maxReplicas: 2
`);
  await waitFor('two ready replicas', async () => (await readyCount('pair')) === 2 || null);
  const before_ = (await livePods('pair')).map((pod) => pod.metadata.name).sort();
  const victim = (await livePods('pair'))[0];
  const port = victim.metadata.annotations['strata.dev/endpoint'].split(':').pop();
  // Streams in flight on both replicas when one engine dies.
  const open = Array.from({ length: 8 }, () => streamChat('pair-chat', 300).then(
    (r) => ({ ok: true, r }), (e) => ({ ok: false, e: String(e) })));
  await sleep(500);
  const killed = spawnSync('pkill', ['-KILL', '-f', `engine-sim.*--port ${port}( |$)`]);
  assert.equal(killed.status, 0, 'the engine process was found and killed');
  // Requests sent now have not started: every one is answered (retried on the other replica).
  const fresh = await Promise.all(Array.from({ length: 20 }, () => streamChat('pair-chat', 4)));
  for (const result of fresh) assert.ok(result.finish);
  const cut = (await Promise.all(open)).filter((r) => !r.ok).length;
  console.log(`# streams cut by the kill: ${cut} of 8 (those already streaming from the killed replica)`);
  await waitFor('a replacement replica, ready', async () => {
    const names = (await livePods('pair')).map((pod) => pod.metadata.name).sort();
    return (await readyCount('pair')) === 2 && JSON.stringify(names) !== JSON.stringify(before_) || null;
  });
  cli('delete', 'service', 'pair');
});

test('a rolling update replaces one replica at a time while clients stream, and loses none', async () => {
  const roll = (revision) => `
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: roll}
spec:
  model: roll-chat
  engine:
    command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]
    env: [{name: MODEL_REVISION, value: "${revision}"}]
  resources: {cpu: "1", memory: 4Gi, gpu: 1}
  minReplicas: 2
  maxReplicas: 2
`;
  applyYaml('roll', roll('1'));
  await waitFor('two ready replicas', async () => (await readyCount('roll')) === 2 || null);
  const original = new Set((await livePods('roll')).map((pod) => pod.metadata.uid));
  const results = [];
  const failures = [];
  const clients = streamingClients('roll-chat', 6, 64, results, failures);
  await sleep(500);
  applyYaml('roll', roll('2'));
  // Sampled while the update runs: replicas serving or starting (draining ones excluded) never
  // exceed the count by more than the one surge replica, and the ready ones never fall under it.
  let mostServing = 0;
  let fewestReady = Infinity;
  await waitFor('every replica replaced', async () => {
    const pods = await livePods('roll');
    const ready = await readyCount('roll');
    const serving = pods.filter((pod) => !pod.metadata.annotations?.['strata.dev/draining']);
    mostServing = Math.max(mostServing, serving.length);
    fewestReady = Math.min(fewestReady, ready);
    return pods.length === 2 && ready === 2 && pods.every((pod) => !original.has(pod.metadata.uid)) || null;
  }, 120);
  await clients.stop();
  console.log(`# rolling update: ${results.length} streams, at most ${mostServing} replicas serving or starting, ` +
    `at least ${fewestReady} ready`);
  assert.deepEqual(failures, [], 'no client saw an error');
  for (const result of results) assert.ok(result.finish, 'every stream ended with a finish reason');
  assert.ok(mostServing <= 3, `one surge replica at a time, saw ${mostServing}`);
  assert.ok(fewestReady >= 2, `ready replicas never fell under the count, saw ${fewestReady}`);
  cli('delete', 'service', 'roll');
  await waitFor('the deleted service\'s pods to go', async () => (await livePods('roll')).length === 0 || null, 60);
});

// The environment of the engine process listening on `port`, from /proc.
function engineEnvironment(port) {
  const found = spawnSync('pgrep', ['-f', `engine-sim.*--port ${port}( |$)`], { encoding: 'utf8' });
  assert.equal(found.status, 0, `an engine process on port ${port}`);
  const pid = found.stdout.trim().split('\n')[0];
  const env = {};
  for (const entry of fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return { pid, env };
}

test('a replica spanning two nodes gets LeaderWorkerSet\'s environment and restarts as one group', async () => {
  applyYaml('wide', `
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: wide}
spec:
  model: wide-chat
  engine: {command: [vllm, serve, meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size, "4", --pipeline-parallel-size, "2"]}
  resources: {cpu: "2", memory: 8Gi, gpu: 4}
  tensorParallel: 4
  nodesPerReplica: 2
  minReplicas: 1
  maxReplicas: 1
`);
  await waitFor('the spanning replica ready', async () => (await readyCount('wide')) === 1 || null);
  const pods = (await livePods('wide')).sort((a, b) => a.spec.owner.rank - b.spec.owner.rank);
  assert.equal(pods.length, 2, 'one pod per node of the replica');
  assert.notEqual(pods[0].spec.nodeName, pods[1].spec.nodeName, 'the two ranks on different nodes');
  const engines = pods.map((pod) => engineEnvironment(pod.metadata.annotations['strata.dev/engine-port']));
  const leader = pods[0].metadata.annotations['strata.dev/leader-address'];
  assert.ok(leader, 'the leader address is on the pods');
  engines.forEach(({ env }, rank) => {
    assert.equal(env.LWS_GROUP_SIZE, '2');
    assert.equal(env.LWS_WORKER_INDEX, String(rank));
    assert.equal(env.LWS_LEADER_ADDRESS, leader);
  });
  const reply = await client.chat.completions.create({
    model: 'wide-chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4,
  });
  assert.ok(reply.choices[0].message.content.length > 0, 'served through the leader');
  // The worker's engine dies: the whole group is replaced, leader included.
  const before_ = new Set(pods.map((pod) => pod.metadata.uid));
  process.kill(Number(engines[1].pid), 'SIGKILL');
  await waitFor('a replacement group, ready', async () => {
    const now = await livePods('wide');
    return now.length === 2 && now.every((pod) => !before_.has(pod.metadata.uid)) &&
      (await readyCount('wide')) === 1 || null;
  }, 120);
  assert.throws(() => process.kill(Number(engines[0].pid), 0), 'the old leader\'s engine stopped');
  cli('delete', 'service', 'wide');
  await waitFor('the deleted service\'s pods to go', async () => (await livePods('wide')).length === 0 || null, 60);
});

test('a Deployment scaled by a KEDA ScaledObject wakes from zero and follows its waiting requests', async () => {
  cli('apply', '-f', path.join(source, 'testdata/manifests/compat/keda/01-vllm-waiting-requests.yaml'));
  const spec = (await service('llama-8b')).spec;
  assert.equal(spec.minReplicas, 0);
  assert.equal(spec.maxReplicas, 4);
  assert.equal(spec.autoscaling.metric, 'queue');
  assert.equal(spec.autoscaling.target, 5);
  await waitFor('the model in the gateway', async () =>
    (await client.models.list()).data.some((m) => m.id === 'llama-8b') || null, 30);
  assert.equal((await livePods('llama-8b')).length, 0, 'minReplicaCount 0: no replica before traffic');
  const first = await streamChat('llama-8b', 8);
  assert.ok(first.finish, 'the first request is served from zero');
  // The autoscaler counts waiting requests (the trigger's vllm:num_requests_waiting), not running ones.
  const decisions = (await service('llama-8b')).status?.decisions ?? [];
  assert.ok(decisions.some((d) => /waiting/.test(d.reason ?? '')), JSON.stringify(decisions));
  cli('delete', 'service', 'llama-8b');
  await waitFor('the deleted service\'s pods to go', async () => (await livePods('llama-8b')).length === 0 || null, 60);
});

test('an InferencePool serves its vLLM Deployment under the served name, and objectives set each request\'s class', async () => {
  cli('apply', '-f', path.join(source, 'testdata/manifests/compat/gaie/01-vllm-pool-quickstart.yaml'));
  const model = 'meta-llama/Llama-3.1-8B-Instruct';
  const spec = (await service('vllm-llama3-8b-instruct')).spec;
  assert.equal(spec.model, model);
  assert.deepEqual(spec.objectives, [{ name: 'chat', priority: 10 }, { name: 'batch-backfill', priority: -1 }]);
  await waitFor('the served name in the gateway', async () =>
    (await client.models.list()).data.some((m) => m.id === model) || null, 30);
  const ask = (objective) => client.chat.completions.create(
    { model, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 },
    { headers: { 'x-gateway-inference-objective': objective } });
  const classes = async () => {
    const text = await (await fetch(`${gatewayURL}/metrics`)).text();
    const out = {};
    for (const line of text.split('\n')) {
      const match = line.match(/^strata_gateway_priority_requests_total\{model="([^"]*)",version="[^"]*",priority="(\w+)"\} (\d+)/);
      if (match && match[1] === model) out[match[2]] = (out[match[2]] ?? 0) + Number(match[3]);
    }
    return out;
  };
  const backfill = await ask('batch-backfill');
  assert.ok(backfill.choices[0].message.content, JSON.stringify(backfill));
  assert.deepEqual(await classes(), { sheddable: 1 });
  await ask('chat');
  await ask('an-objective-nobody-declared');
  assert.deepEqual(await classes(), { sheddable: 1, critical: 1, standard: 1 });
  cli('delete', 'service', 'vllm-llama3-8b-instruct');
  await waitFor('the deleted service\'s pods to go', async () =>
    (await livePods('vllm-llama3-8b-instruct')).length === 0 || null, 60);
});

test('the KServe llama2-7b example applies and serves through engine-sim', async () => {
  cli('apply', '-f', path.join(source, 'examples/llama2-7b/inferenceservice.yaml'));
  await waitFor('llama2-7b ready', async () => (await readyCount('llama2-7b')) >= 1 || null);
  const models = await client.models.list();
  assert.ok(models.data.some((m) => m.id === 'llama2-7b'), JSON.stringify(models.data));
  const reply = await client.chat.completions.create({
    model: 'llama2-7b', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8,
  });
  assert.ok(reply.choices[0].message.content.length > 0);
  const pod = (await livePods('llama2-7b'))[0];
  assert.match(JSON.stringify(pod.metadata.annotations), /engine-sim/);
  cli('delete', 'service', 'llama2-7b');
});
