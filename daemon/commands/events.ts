// `warren events dead-letters` and `warren events retry`: the outbound events no receiver took (README "Outbound
// events"), read from and sent again through the events queue in Redis, with or without a daemon running.
import type { Command } from 'commander';
import type { DeadLetter, OutboundEvents } from '../../activation/outbound-events.ts';
import { loadWarrenConfig } from '../../services/config.ts';
import { createLogger } from '../logger.ts';

/** `warren events dead-letters`' lines (pure). */
export function deadLetterTable(letters: readonly DeadLetter[]): string {
  if (!letters.length) return 'no dead letters: every outbound event was taken (or is still being tried)\n';
  return letters.map((d) => `${d.failedAt ? new Date(d.failedAt).toISOString() : '-'}  ${d.eventId}  ${d.agent}  ${d.url}  after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}: ${d.reason}`).join('\n') + '\n';
}

export function registerEventsCommand(program: Command): void {
  const events = program.command('events').description('outbound events no receiver took: list them, send them again');
  events
    .command('dead-letters')
    .description('the events out of attempts, newest first (event id, agent, URL, why the last attempt failed)')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('-n, --limit <n>', 'at most this many', (v) => Number(v), 100)
    .option('--json', 'as JSON')
    .action(async (opts: { config: string; limit: number; json?: boolean }) => {
      await withEvents(opts.config, async (ev) => {
        const letters = await ev.deadLetters(opts.limit);
        process.stdout.write(opts.json ? `${JSON.stringify(letters, null, 2)}\n` : deadLetterTable(letters));
      });
    });
  events
    .command('retry')
    .description('send dead letters again with fresh attempts: one event id, or --all')
    .argument('[event-id]', 'the event id (as `dead-letters` lists it)')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('--all', 'every dead letter')
    .action(async (eventId: string | undefined, opts: { config: string; all?: boolean }) => {
      if ((eventId === undefined) === !opts.all) throw new Error('name one event id, or --all');
      await withEvents(opts.config, async (ev) => {
        const n = await ev.retryDeadLetters(eventId);
        if (n === 0 && eventId !== undefined) {
          process.stderr.write(`no dead letter with event id ${eventId} (see \`warren events dead-letters\`)\n`);
          process.exitCode = 1;
          return;
        }
        process.stdout.write(`${n} dead letter${n === 1 ? '' : 's'} queued again; a running daemon sends ${n === 1 ? 'it' : 'them'}\n`);
      });
    });
}

async function withEvents(configFile: string, use: (ev: OutboundEvents) => Promise<void>): Promise<void> {
  const config = loadWarrenConfig(configFile);
  const { openServices } = await import('../../services/composition.ts');
  const { OutboundEvents } = await import('../../activation/outbound-events.ts');
  const services = await openServices(config, process.env, { name: 'ops' });
  // No worker here: this process only reads and re-queues; the daemons' workers send.
  const ev = new OutboundEvents({ connection: await services.redis(), prefix: config.redis.prefix, fleetTargets: () => [], agentTargets: () => [], secrets: { get: () => undefined }, learnSecret: () => {}, attempts: config.events.attempts, retryBaseMs: config.events.retry_base, logger: createLogger() });
  try {
    await use(ev);
  } finally {
    await ev.close();
    await services.close();
  }
}
