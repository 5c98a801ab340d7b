export declare const HEAP_GROWING_PERCENT: number;
export declare const MAX_SEMI_SPACE_MB: number;
export declare function heapSettings(): { execArgv: string[]; env: Record<string, string> };
