#!/usr/bin/env node
// Launcher for the `gatehouse` CLI: the sources are TypeScript, so register tsx's loader in this
// process (no second process to forward signals and exit codes to) and run src/cli/main.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import(new URL('../src/cli/main.ts', import.meta.url).href);
process.exitCode = await main(process.argv);
