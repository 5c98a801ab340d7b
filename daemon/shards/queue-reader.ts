// A shard's activation queue opened to read, move and remove jobs without writing anything of its own: a BullMQ
// Queue writes its meta hash when it opens, and that hash under the home prefix is one of the keys by which a
// fleet's one-shard layout is recognised (shard-check.ts). Jobs are added only through ActivationQueue.
import { Queue } from 'bullmq';
import type { ActivationJob } from '../../scheduler/activation-job.ts';
import { ACTIVATION_QUEUE } from '../../redis/keys.ts';
import type { RedisClient } from '../../redis/scripts.ts';

export function openQueueReader(redis: RedisClient, prefix: string): Queue<ActivationJob> {
  const q = new Queue<ActivationJob>(ACTIVATION_QUEUE, { connection: redis, prefix, skipMetasUpdate: true });
  q.on('error', () => undefined); // a command's own failure reaches its caller
  return q;
}
