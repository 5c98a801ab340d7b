export declare function heapSettings(machine: { totalMemoryBytes: number }): { execArgv: string[]; env: Record<string, string> };
