// `node with-env-file.js <env.json> -- <command> [args…]`: runs a command with extra environment variables read
// from a file. CLIs whose MCP configuration only takes a command line (goose's `--with-extension "KEY=VAL cmd"`)
// would otherwise carry the server's secrets in argv, where any local user can read them with ps.
// Plain JavaScript: it runs as its own Node program, also from an installed package, where Node strips no types.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [file, dashes, command, ...args] = process.argv.slice(2);
if (!file || dashes !== '--' || !command) {
  process.stderr.write('usage: with-env-file.js <env.json> -- <command> [args…]\n');
  process.exit(2);
}
const extra = JSON.parse(readFileSync(file, 'utf8'));
const child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, ...extra } });
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
child.on('error', (err) => {
  process.stderr.write(`with-env-file: ${err.message}\n`);
  process.exit(127);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
