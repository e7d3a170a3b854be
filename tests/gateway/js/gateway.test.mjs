// The official openai client against `strata gateway` in front of a replica: `strata
// engine-sim` when the binary has it, else a minimal OpenAI-shaped upstream written here.
// Everything binds port 0 on loopback.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';

const strata =
  process.env.STRATA_BIN ?? path.join(process.env.STRATA_BINARY_DIR ?? 'build/release', 'bin', 'strata');
const MODEL = 'llama-test';
const children = [];
let upstreamServer;
let client;
let baseURL;

// Starts a process and resolves with the port it prints on its "listening on ...:PORT" line.
function startListening(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(strata, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let seen = '';
    child.stdout.on('data', (data) => {
      seen += data.toString();
      const match = seen.match(/listening on \S*:(\d+)/);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', (code) => reject(new Error(`${args[0]} exited with ${code}: ${seen}`)));
  });
}

// A replica that answers like vLLM: words of a fixed reply, one SSE chunk per token.
function startFakeUpstream() {
  const words = ['Hello', ' from', ' the', ' fake', ' replica.'];
  return new Promise((resolve) => {
    upstreamServer = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (req.url === '/metrics') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('vllm:num_requests_waiting 0\nvllm:num_requests_running 0\nvllm:kv_cache_usage_perc 0\n');
          return;
        }
        const request = JSON.parse(body);
        const chat = req.url === '/v1/chat/completions';
        const completion = words.slice(0, request.max_tokens ?? words.length);
        const usage = {
          prompt_tokens: Math.ceil(body.length / 4),
          completion_tokens: completion.length,
          total_tokens: Math.ceil(body.length / 4) + completion.length,
        };
        const base = { id: 'cmpl-1', created: 1, model: request.model };
        if (!request.stream) {
          res.writeHead(200, { 'content-type': 'application/json' });
          const text = completion.join('');
          res.end(JSON.stringify({
            ...base,
            object: chat ? 'chat.completion' : 'text_completion',
            choices: [chat
              ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }
              : { index: 0, text, finish_reason: 'stop' }],
            usage,
          }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const object = chat ? 'chat.completion.chunk' : 'text_completion';
        for (const word of completion) {
          const choice = chat ? { index: 0, delta: { content: word } } : { index: 0, text: word };
          res.write(`data: ${JSON.stringify({ ...base, object, choices: [choice] })}\n\n`);
        }
        if (request.stream_options?.include_usage) {
          res.write(`data: ${JSON.stringify({ ...base, object, choices: [], usage })}\n\n`);
        }
        res.end('data: [DONE]\n\n');
      });
    });
    upstreamServer.listen(0, '127.0.0.1', () => resolve(upstreamServer.address().port));
  });
}

before(async () => {
  const hasEngineSim = /\bengine-sim\b/.test(spawnSync(strata, ['--help']).stdout?.toString() ?? '');
  const upstreamPort = hasEngineSim
    ? await startListening(['engine-sim', '--port', '0', '--model', MODEL])
    : await startFakeUpstream();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-gw-js-'));
  const config = path.join(dir, 'gateway.yaml');
  fs.writeFileSync(config, [
    'threads: 2',
    'models:',
    `- {name: ${MODEL}, versions: [{name: v1, endpoints: ["127.0.0.1:${upstreamPort}"]}]}`,
    'tenants:',
    '- {name: js, keys: [sk-js], tokensPerMinute: 1000000}',
    '',
  ].join('\n'));
  const gatewayPort = await startListening(['gateway', '--listen', '127.0.0.1:0', '--config', config]);
  baseURL = `http://127.0.0.1:${gatewayPort}/v1`;
  client = new OpenAI({ apiKey: 'sk-js', baseURL, maxRetries: 0 });
});

after(() => {
  for (const child of children) child.kill('SIGTERM');
  upstreamServer?.close();
});

const messages = [{ role: 'user', content: 'Tell me something short.' }];

test('lists the served model', async () => {
  const models = await client.models.list();
  assert.ok(models.data.some((m) => m.id === MODEL));
});

test('chat: streaming delivers the same text as non-streaming, in order, with usage', async () => {
  const whole = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 5 });
  const text = whole.choices[0].message.content;
  assert.equal(typeof text, 'string');
  assert.ok(text.length > 0);
  assert.ok(whole.usage.prompt_tokens > 0);
  assert.ok(whole.usage.completion_tokens > 0 && whole.usage.completion_tokens <= 5);

  const stream = await client.chat.completions.create({
    model: MODEL, messages, max_tokens: 5, stream: true, stream_options: { include_usage: true },
  });
  let streamed = '';
  let usage;
  let chunksAfterUsage = 0;
  for await (const chunk of stream) {
    if (usage) chunksAfterUsage += 1;
    if (chunk.choices.length > 0) streamed += chunk.choices[0].delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(streamed, text);
  assert.ok(usage, 'the final chunk carries usage');
  assert.equal(chunksAfterUsage, 0, 'usage comes last');
  assert.equal(usage.completion_tokens, whole.usage.completion_tokens);
});

test('completions: streaming and non-streaming agree', async () => {
  const prompt = 'Once upon a time';
  const whole = await client.completions.create({ model: MODEL, prompt, max_tokens: 4 });
  assert.ok(whole.choices[0].text.length > 0);
  assert.ok(whole.usage.completion_tokens > 0);
  const stream = await client.completions.create({ model: MODEL, prompt, max_tokens: 4, stream: true });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.text ?? '';
  assert.equal(streamed, whole.choices[0].text);
});

test('an unknown key is refused with 401', async () => {
  const stranger = new OpenAI({ apiKey: 'sk-unknown', baseURL, maxRetries: 0 });
  await assert.rejects(stranger.chat.completions.create({ model: MODEL, messages }),
    (error) => error instanceof OpenAI.AuthenticationError && error.status === 401);
});

test('an unknown model is a 404', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'no-such-model', messages }),
    (error) => error instanceof OpenAI.NotFoundError && error.status === 404);
});
