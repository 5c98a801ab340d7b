/** Parses `128KiB`, `8MiB`, `64KB`, `1GB` or a bare number of bytes into bytes; undefined when malformed (pure). */
export function parseByteSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$/.exec(value);
  if (!m) return undefined;
  // KB and KiB alike: a retention bound is no place for the decimal/binary distinction to surprise anyone.
  const unit = { B: 1, KB: 1024, KiB: 1024, MB: 1024 ** 2, MiB: 1024 ** 2, GB: 1024 ** 3, GiB: 1024 ** 3 }[m[2] ?? 'B']!;
  return Math.round(Number(m[1]) * unit);
}
