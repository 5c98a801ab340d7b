// Values the global setup hands to every test file through vitest's provide/inject.
import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
