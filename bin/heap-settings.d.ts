export declare const HEAP_GROWING_PERCENT: number;
export declare function heapSettings(): { execArgv: string[]; env: Record<string, string> };
