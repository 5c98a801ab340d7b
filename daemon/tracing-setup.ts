// Turns tracing on for this process: an SDK tracer provider exporting batches over OTLP/HTTP. Without it
// the spans agent-loop/tracing.ts starts are no-ops.
import { trace } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { WarrenConfig } from '../services/config.ts';

export interface Tracing {
  /** Exports what is buffered and stops; spans started later are no-ops. */
  shutdown(): Promise<void>;
}

export async function startTracing(cfg: WarrenConfig['tracing'], logger: Logger): Promise<Tracing | undefined> {
  if (!cfg.enabled) return undefined;
  // The SDK and its exporter are megabytes of live heap: loaded only when tracing is on.
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor, TracerProvider }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace'),
  ]);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': cfg.service_name }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: cfg.endpoint }), scheduledDelayMillis: 1_000 })],
  });
  if (!trace.setGlobalTracerProvider(provider)) {
    // Another provider is registered in this process (an embedding application's): spans go there.
    logger.warn('an OpenTelemetry tracer provider is already registered; warren’s spans go to it, not to tracing.endpoint');
    void provider.shutdown();
    return undefined;
  }
  logger.info({ endpoint: cfg.endpoint, payloads: cfg.capture_payloads }, 'tracing to OTLP');
  return {
    shutdown: async () => {
      await provider.shutdown().catch((err: unknown) => logger.warn({ err }, 'could not flush the last spans'));
      trace.disable();
    },
  };
}
