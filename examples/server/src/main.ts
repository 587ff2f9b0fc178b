#!/usr/bin/env node
/**
 * The example server's command (`hosting-server`, `node dist/main.js`): see
 * `Cli.ts`. The young generation is held at its size before the server's
 * modules load, which is why they are loaded here and not imported
 * (`StartHeap.ts`).
 */
import { hold } from "./StartHeap.js"

hold()
await import("./Cli.js")
