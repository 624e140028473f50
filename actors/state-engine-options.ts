/** How a state engine works; every field has a default (engineSettings). */
export interface StateEngineOptions {
  /** Durables named `{durablePrefix}_p{partition}_{epoch}` instead of the namespace's (a second engine beside the service's, in tests). */
  durablePrefix?: string;
  /** An actor with nothing to do for this long is passivated. @default 60_000 (1 min) */
  idleMs?: number;
  /** Views are regenerated once a patient's logs stop for this long. @default 250 ms */
  viewDebounceMs?: number;
  /** A patient waiting this long to render while the engine stays busy is passivated. @default 5_000 */
  renderWaitMs?: number;
  /** Most patients held in memory; past it the least recently fed are passivated. @default 1_000 */
  maxActive?: number;
  /**
   * Bytes of delivered, not yet acknowledged messages held at most (as read from the
   * stream; parsed, they take several times that); the consumer reads on once under it.
   * @default 16 MiB
   */
  maxInflightBytes?: number;
  /** Bytes one pull should bring (see PacedPull). @default 4 MiB */
  pullBytes?: number;
  /** The durables' ack wait; a delivery held a third of it is reported in progress (see HeldDeliveries). @default 60_000 */
  ackWaitMs?: number;
}

/** The options with their defaults filled in: the one place the defaults live. */
export function engineSettings(o: StateEngineOptions): Required<Omit<StateEngineOptions, "durablePrefix">> & Pick<StateEngineOptions, "durablePrefix"> {
  return {
    ...(o.durablePrefix !== undefined ? { durablePrefix: o.durablePrefix } : {}),
    idleMs: o.idleMs ?? 60_000,
    viewDebounceMs: o.viewDebounceMs ?? 250,
    renderWaitMs: o.renderWaitMs ?? 5_000,
    maxActive: o.maxActive ?? 1_000,
    maxInflightBytes: o.maxInflightBytes ?? 16 * 1024 * 1024,
    pullBytes: o.pullBytes ?? 4 * 1024 * 1024,
    ackWaitMs: o.ackWaitMs ?? 60_000,
  };
}
