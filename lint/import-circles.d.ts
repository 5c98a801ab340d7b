export function importGraph(root: string): Map<string, Set<string>>;
export function circles(graph: Map<string, Set<string>>): string[][];
