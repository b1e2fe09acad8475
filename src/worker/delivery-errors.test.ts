import { describe, expect, it } from 'vitest';
import { createRedactor } from '../core/redact.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { describeThrown } from './delivery-errors.ts';
import { deadLetterPoisonMessage } from './poison-message.ts';

const model = async () => ({ text: 'done', usage: { input: 1, output: 1 } });

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

describe('a delivery that threw a revoked Proxy', () => {
  it('is described without throwing', () => {
    expect(describeThrown(revokedProxy(), createRedactor())).toBe('[object]');
  });

  it('is dead-lettered at the delivery bound rather than released forever', async () => {
    const stores = createMemoryStores();
    const result = await deadLetterPoisonMessage({ body: 'not json', id: 'm-1' }, { model, tools: [], stores, lastError: revokedProxy(), deliveries: 5 });
    expect(result.status).toBe('delivery_limit_exceeded');
    expect(await stores.messageDlq.list()).toHaveLength(1);
  });
});
