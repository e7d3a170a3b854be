// A burst of chat requests through strata's gateway with the official openai client, for the
// demo: CLIENTS concurrent clients stream completions back to back for SECONDS seconds, then it
// prints how many completed, the median time to first token and any error.
//
//   node burst.mjs GATEWAY_URL MODEL [CLIENTS] [SECONDS]
import OpenAI from 'openai';

const [gateway, model, clientsArg = '24', secondsArg = '20'] = process.argv.slice(2);
if (!gateway || !model) {
  console.error('usage: node burst.mjs GATEWAY_URL MODEL [CLIENTS] [SECONDS]');
  process.exit(2);
}
const client = new OpenAI({ baseURL: `${gateway}/v1`, apiKey: 'demo', maxRetries: 0 });
const until = Date.now() + Number(secondsArg) * 1000;
const ttfts = [];
const errors = [];
let completed = 0;

async function oneClient() {
  while (Date.now() < until) {
    const start = Date.now();
    try {
      const stream = await client.chat.completions.create({
        model, stream: true, max_tokens: 64,
        messages: [{ role: 'user', content: 'Explain tensor parallelism in one paragraph.' }],
      });
      let first = true;
      for await (const chunk of stream) {
        if (first && chunk.choices[0]?.delta?.content) {
          ttfts.push(Date.now() - start);
          first = false;
        }
      }
      ++completed;
    } catch (error) {
      errors.push(String(error));
    }
  }
}

await Promise.all(Array.from({ length: Number(clientsArg) }, oneClient));
ttfts.sort((a, b) => a - b);
const median = ttfts.length ? ttfts[Math.floor(ttfts.length / 2)] : 0;
console.log(`${completed} streamed completions, median time to first token ${median} ms, ` +
  `${errors.length} error(s)${errors.length ? ': ' + errors[0] : ''}`);
