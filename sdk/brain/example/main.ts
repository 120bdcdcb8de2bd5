// Serves the example brain: `deno run -A sdk/brain/example/main.ts`, then give the printed URL
// as the agent's brain_url. BRAIN_PORT (default 8790) and HOST (default 127.0.0.1) move it.
import { createExampleBrain } from "./brain.ts";

const served = createExampleBrain().serve({
  hostname: Deno.env.get("HOST") ?? "127.0.0.1",
  port: Number(Deno.env.get("BRAIN_PORT") ?? 8790),
  path: "/brain",
});
console.log(`example brain listening on ${served.url}`);
await served.finished;
