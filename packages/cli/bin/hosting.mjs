#!/usr/bin/env node
// The installed `hosting` command: the built CLI (`pnpm build` makes dist/).
import "../dist/bin.js"
