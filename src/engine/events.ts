// The event hub behind `FactoryApi.on`: typed by the event map, like mitt.

import type { FactoryEventName, FactoryEvents, Unsubscribe } from '../core/api';

type Listener<E extends FactoryEventName> = (payload: FactoryEvents[E]) => void;

export class EventHub {
  private readonly listeners = new Map<FactoryEventName, Set<Listener<never>>>();

  /** Subscribes; the returned function unsubscribes (calling it twice is harmless). */
  on<E extends FactoryEventName>(event: E, listener: Listener<E>): Unsubscribe {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    const entry = listener as Listener<never>;
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }

  /**
   * Calls every listener of `event` with `payload`. A listener that throws is reported and does
   * not stop the others: one broken door must not silence the rest.
   */
  emit<E extends FactoryEventName>(event: E, payload: FactoryEvents[E]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        (listener as Listener<E>)(payload);
      } catch (error) {
        console.error(`A listener of the ${event} event failed:`, error);
      }
    }
  }
}
