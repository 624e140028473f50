/** Partitions of a namespace created without PSS_PARTITIONS. */
export const DEFAULT_PARTITIONS = 16;

/**
 * The partition a patient's logs go to: FNV-1a (32 bit) of the patient id, modulo the
 * namespace's partition count. Stable across processes, machines and versions: it is part
 * of every log subject, so changing it would strand every stored history.
 */
export function partitionOf(patientId: string, partitions: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < patientId.length; i++) {
    h ^= patientId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}
