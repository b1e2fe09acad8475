import { describe, expect, it } from 'vitest';
import { useStoresHarness, type MakeStores } from './stores-contract-harness.ts';

const LEASE_MS = 30_000;

/**
 * Contract of `RunQueue`: idempotent enqueue, FIFO, leases, lease renewal, redelivery, release
 * with a delay or without counting the delivery, no double reservation.
 */
export function describeRunQueueContract(makeStores: MakeStores): void {
  describe('RunQueue', () => {
    const harness = useStoresHarness(makeStores);
    const queue = () => harness().stores.queue;
    const extendLease = (id: string, deliveries: number, leaseMs: number): Promise<boolean> => {
      const renew = queue().extendLease;
      expect(renew, 'RunQueue.extendLease is implemented').toBeTypeOf('function');
      return renew!.call(queue(), id, deliveries, leaseMs);
    };

    it('is empty at first', async () => {
      expect(await queue().size()).toBe(0);
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
    });

    it('delivers a message with its body, a first delivery count and the enqueue time', async () => {
      const { clock } = harness();
      const enqueuedAt = new Date(clock.now()).toISOString();
      const body = '{"input":"Réserve un vol 東京 🚀","n":1}';
      expect(await queue().enqueue({ id: 'm1', body })).toBe('m1');
      await clock.advance(5_000);
      expect(await queue().reserve(LEASE_MS)).toEqual({ id: 'm1', body, deliveries: 1, enqueuedAt });
    });

    it('assigns distinct ids when none is given', async () => {
      const ids = await Promise.all(Array.from({ length: 20 }, () => queue().enqueue({ body: '{}' })));
      expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
      expect(new Set(ids).size).toBe(20);
      expect(await queue().size()).toBe(20);
    });

    it('ignores an enqueue of an id that is waiting, leased or acknowledged', async () => {
      await queue().enqueue({ id: 'm1', body: 'first' });
      expect(await queue().enqueue({ id: 'm1', body: 'second' })).toBe('m1');
      expect(await queue().size()).toBe(1);
      const delivery = await queue().reserve(LEASE_MS);
      expect(delivery?.body).toBe('first');
      await queue().enqueue({ id: 'm1', body: 'while leased' });
      expect(await queue().size()).toBe(1);
      await queue().ack('m1');
      await queue().enqueue({ id: 'm1', body: 'after ack' });
      expect(await queue().size()).toBe(0);
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
    });

    it('delivers in FIFO order, even when enqueued within one millisecond', async () => {
      for (const id of ['a', 'b', 'c', 'd']) await queue().enqueue({ id, body: id });
      const order: (string | undefined)[] = [];
      for (let index = 0; index < 4; index++) order.push((await queue().reserve(LEASE_MS))?.id);
      expect(order).toEqual(['a', 'b', 'c', 'd']);
    });

    it('does not hand out a leased message again, and forgets an acknowledged one', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'm1', body: 'x' });
      await queue().reserve(LEASE_MS);
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      expect(await queue().size()).toBe(1);
      await queue().ack('m1');
      expect(await queue().size()).toBe(0);
      await clock.advance(LEASE_MS * 2);
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      await queue().ack('m1');
      await queue().ack('never-enqueued');
      await queue().release('never-enqueued');
    });

    it('redelivers a message whose lease expired, counting the delivery', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'm1', body: 'x' });
      const first = await queue().reserve(LEASE_MS);
      await clock.advance(LEASE_MS - 1);
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      await clock.advance(1);
      const second = await queue().reserve(LEASE_MS);
      expect(second).toEqual({ ...first, deliveries: 2 });
      await clock.advance(LEASE_MS);
      expect((await queue().reserve(1_000))?.deliveries).toBe(3);
      expect(await queue().size()).toBe(1);
    });

    it('gives a redelivered message back its place ahead of younger ones', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'old', body: 'x' });
      await queue().reserve(LEASE_MS);
      await clock.advance(1);
      await queue().enqueue({ id: 'young', body: 'y' });
      await clock.advance(LEASE_MS);
      expect((await queue().reserve(LEASE_MS))?.id).toBe('old');
      expect((await queue().reserve(LEASE_MS))?.id).toBe('young');
    });

    it('redelivers a released message at once', async () => {
      await queue().enqueue({ id: 'm1', body: 'x' });
      await queue().reserve(LEASE_MS);
      await queue().release('m1');
      const again = await queue().reserve(LEASE_MS);
      expect(again?.id).toBe('m1');
      expect(again?.deliveries).toBe(2);
    });

    it('release with delayMs keeps a message from being reserved until the delay ends, counting the delivery', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'm1', body: 'x' });
      const first = await queue().reserve(LEASE_MS);
      await queue().release('m1', { delayMs: 5_000 });
      expect(await queue().size()).toBe(1);
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      await clock.advance(4_999);
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      await clock.advance(1);
      expect(await queue().reserve(LEASE_MS)).toEqual({ ...first, deliveries: 2 });
    });

    it('delivers younger messages while an older one waits out its release delay, then the older one', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'old', body: 'o' });
      await queue().reserve(LEASE_MS);
      await queue().enqueue({ id: 'young', body: 'y' });
      await queue().release('old', { delayMs: 1_000 });
      expect((await queue().reserve(LEASE_MS))?.id).toBe('young');
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      await clock.advance(1_000);
      expect(await queue().reserve(LEASE_MS)).toMatchObject({ id: 'old', deliveries: 2 });
    });

    it('release with delayMs 0 or no options redelivers at once', async () => {
      await queue().enqueue({ id: 'm1', body: 'x' });
      await queue().reserve(LEASE_MS);
      await queue().release('m1', { delayMs: 0 });
      expect((await queue().reserve(LEASE_MS))?.deliveries).toBe(2);
      await queue().release('m1', {});
      expect((await queue().reserve(LEASE_MS))?.deliveries).toBe(3);
    });

    it('release with countDelivery: false gives the delivery back uncounted, also with a delay', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'm1', body: 'x' });
      expect((await queue().reserve(LEASE_MS))?.deliveries).toBe(1);
      await queue().release('m1', { countDelivery: false });
      expect((await queue().reserve(LEASE_MS))?.deliveries).toBe(1);
      await queue().release('m1', { countDelivery: false, delayMs: 2_000 });
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      await clock.advance(2_000);
      expect((await queue().reserve(LEASE_MS))?.deliveries).toBe(1);
      await queue().release('m1', { countDelivery: true });
      expect((await queue().reserve(LEASE_MS))?.deliveries).toBe(2);
    });

    it('countDelivery: false only gives back a delivery that is leased, never more than one', async () => {
      await queue().enqueue({ id: 'm1', body: 'x' });
      await queue().enqueue({ id: 'waiting', body: 'w' });
      await queue().reserve(LEASE_MS);
      await queue().release('m1', { countDelivery: false });
      // released already, and a message never reserved: no delivery to give back
      await queue().release('m1', { countDelivery: false });
      await queue().release('waiting', { countDelivery: false, delayMs: 1 });
      expect(await queue().reserve(LEASE_MS)).toMatchObject({ id: 'm1', deliveries: 1 });
      await queue().release('m1', { countDelivery: false, delayMs: 60_000 });
      await queue().release('m1', { countDelivery: false });
      const { clock } = harness();
      await clock.advance(1);
      expect(await queue().reserve(LEASE_MS)).toMatchObject({ id: 'm1', deliveries: 1 });
      expect(await queue().reserve(LEASE_MS)).toMatchObject({ id: 'waiting', deliveries: 1 });
    });

    it('does not extend the lease of a delivery released with a delay, nor shorten the delay', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'm1', body: 'x' });
      const first = await queue().reserve(LEASE_MS);
      await queue().release('m1', { delayMs: 10_000 });
      expect(await extendLease('m1', first!.deliveries, LEASE_MS)).toBe(false);
      await clock.advance(10_000);
      expect(await queue().reserve(LEASE_MS)).toMatchObject({ id: 'm1', deliveries: 2 });
    });

    it('release with deliveries changes nothing once the message was reserved again by another consumer', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'm1', body: 'x' });
      const first = await queue().reserve(LEASE_MS);
      await clock.advance(LEASE_MS);
      const second = await queue().reserve(LEASE_MS);
      expect(second?.deliveries).toBe(2);
      // the first consumer, whose lease ended, gives back "its" delivery late
      await queue().release('m1', { deliveries: first!.deliveries, countDelivery: false });
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      expect(await extendLease('m1', second!.deliveries, LEASE_MS)).toBe(true);
      // the second consumer's own release applies
      await queue().release('m1', { deliveries: second!.deliveries, countDelivery: false });
      expect((await queue().reserve(LEASE_MS))?.deliveries).toBe(2);
    });

    it('release of an acknowledged or unknown message does nothing, whatever the options', async () => {
      await queue().enqueue({ id: 'm1', body: 'x' });
      await queue().reserve(LEASE_MS);
      await queue().ack('m1');
      await queue().release('m1', { delayMs: 1_000, countDelivery: false });
      await queue().release('never-enqueued', { delayMs: 1_000, countDelivery: false });
      expect(await queue().size()).toBe(0);
      await queue().enqueue({ id: 'm1', body: 'after ack' });
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
    });

    it('rejects a release delay that is negative, not finite or above 2^31 − 1 with INVALID_OPTIONS, changing nothing', async () => {
      await queue().enqueue({ id: 'm1', body: 'x' });
      await queue().reserve(LEASE_MS);
      for (const delayMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
        const error = await queue()
          .release('m1', { delayMs })
          .then(
            () => undefined,
            (caught: unknown) => caught,
          );
        expect(error, `delayMs ${delayMs}`).toBeInstanceOf(Error);
        expect((error as { code?: string }).code).toBe('INVALID_OPTIONS');
      }
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
    });

    it('never hands one message to two concurrent reservations', async () => {
      for (let index = 0; index < 20; index++) await queue().enqueue({ id: `m${index}`, body: String(index) });
      const deliveries = await Promise.all(Array.from({ length: 30 }, () => queue().reserve(LEASE_MS)));
      const delivered = deliveries.filter((delivery) => delivery !== undefined).map((delivery) => delivery.id);
      expect(delivered).toHaveLength(20);
      expect(new Set(delivered).size).toBe(20);
      expect(deliveries.filter((delivery) => delivery === undefined)).toHaveLength(10);
    });

    it('keeps a message with an extended lease invisible past its old lease, then redelivers it', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'm1', body: 'x' });
      const first = await queue().reserve(LEASE_MS);
      await clock.advance(LEASE_MS - 1_000);
      // the new lease runs from now, not from the old end
      expect(await extendLease('m1', first!.deliveries, LEASE_MS)).toBe(true);
      await clock.advance(1_000);
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      await clock.advance(LEASE_MS - 1_001);
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      expect(await extendLease('m1', first!.deliveries, LEASE_MS)).toBe(true);
      expect(await extendLease('m1', first!.deliveries, LEASE_MS)).toBe(true);
      await clock.advance(LEASE_MS - 1);
      expect(await queue().reserve(LEASE_MS)).toBeUndefined();
      await clock.advance(1);
      expect(await queue().reserve(LEASE_MS)).toEqual({ ...first, deliveries: 2 });
    });

    it('does not extend a lease that ended and was taken by a second reservation', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'm1', body: 'x' });
      const first = await queue().reserve(LEASE_MS);
      await clock.advance(LEASE_MS);
      const second = await queue().reserve(LEASE_MS);
      expect(second?.deliveries).toBe(2);
      expect(await extendLease('m1', first!.deliveries, LEASE_MS * 10)).toBe(false);
      // the second consumer's lease is untouched, and still its own to renew
      await clock.advance(LEASE_MS);
      expect(await extendLease('m1', second!.deliveries, LEASE_MS)).toBe(false);
      expect((await queue().reserve(LEASE_MS))?.deliveries).toBe(3);
      expect(await extendLease('m1', 3, LEASE_MS)).toBe(true);
    });

    it('does not extend a lease that ended, even when nobody reserved the message since', async () => {
      const { clock } = harness();
      await queue().enqueue({ id: 'm1', body: 'x' });
      const first = await queue().reserve(LEASE_MS);
      await clock.advance(LEASE_MS);
      expect(await extendLease('m1', first!.deliveries, LEASE_MS)).toBe(false);
      expect((await queue().reserve(LEASE_MS))?.deliveries).toBe(2);
    });

    it('does not extend the lease of an acknowledged, released, waiting or unknown message', async () => {
      await queue().enqueue({ id: 'acked', body: 'a' });
      await queue().enqueue({ id: 'released', body: 'r' });
      await queue().enqueue({ id: 'waiting', body: 'w' });
      const acked = await queue().reserve(LEASE_MS);
      const released = await queue().reserve(LEASE_MS);
      await queue().ack('acked');
      await queue().release('released');
      expect(await extendLease('acked', acked!.deliveries, LEASE_MS)).toBe(false);
      expect(await extendLease('released', released!.deliveries, LEASE_MS)).toBe(false);
      expect(await extendLease('waiting', 0, LEASE_MS)).toBe(false);
      expect(await extendLease('never-enqueued', 1, LEASE_MS)).toBe(false);
      expect(await queue().size()).toBe(2);
      expect((await queue().reserve(LEASE_MS))?.id).toBe('released');
      expect((await queue().reserve(LEASE_MS))?.id).toBe('waiting');
    });

    it('rejects an extension that is not a positive number of milliseconds', async () => {
      await queue().enqueue({ id: 'm1', body: 'x' });
      const delivery = await queue().reserve(LEASE_MS);
      await expect(extendLease('m1', delivery!.deliveries, 0)).rejects.toThrow();
      await expect(extendLease('m1', delivery!.deliveries, Number.POSITIVE_INFINITY)).rejects.toThrow();
      expect(await extendLease('m1', delivery!.deliveries, LEASE_MS)).toBe(true);
    });

    it('rejects a lease that is not a positive number of milliseconds', async () => {
      await queue().enqueue({ id: 'm1', body: 'x' });
      await expect(queue().reserve(0)).rejects.toThrow();
      await expect(queue().reserve(-5)).rejects.toThrow();
      await expect(queue().reserve(Number.NaN)).rejects.toThrow();
      expect((await queue().reserve(LEASE_MS))?.deliveries).toBe(1);
    });
  });
}
