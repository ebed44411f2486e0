#!/usr/bin/env node
// Installed entry point: runs the TypeScript CLI through tsx.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
const here = dirname(fileURLToPath(import.meta.url));
const r = spawnSync(process.execPath, ['--import', 'tsx', join(here, 'main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
