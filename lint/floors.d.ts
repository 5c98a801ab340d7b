export const FLOORS: readonly (readonly string[])[];
export function floorOf(folder: string): number | undefined;
