#!/usr/bin/env node
// Installed entry point (`nodefleet`, `npm run cli`, `npm start`): checks the Node.js version
// first, then runs the TypeScript CLI in this process through tsx, resolved from this file's own
// node_modules so that it works from any working directory.
import './node-version.mjs';
const { register } = await import('tsx/esm/api');
register();
await import('./main.ts');
