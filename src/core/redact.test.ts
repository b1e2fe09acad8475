/**
 * The redactor: every secret family in free text, in values and as property names; normalised
 * sensitive keys; the scan bound; and `value` on hostile inputs (deep, throwing, exotic, huge).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leakedCanaries, SECRET_CANARIES } from '../../test/observability-redaction-inputs.ts';
import { createRedactor, REDACTION_MARKERS, TEXT_CUT_MARKER } from './redact.ts';
import { DEFAULT_SENSITIVE_KEYS, normaliseKey } from './redact-keys.ts';
import { compileKeyMatcher } from './redact-keys.ts';
import { scanSecretSpans } from './redact-scan.ts';

const redactor = createRedactor();
const text = (input: string) => redactor.text(input);

describe('free text: each family', () => {
  it('e-mail addresses', () => {
    expect(text('write to mia.li3818@example.com today')).toBe('write to *** today');
    expect(text('a+tag@sub.example.co.uk, b@c.io')).toBe('***, ***');
    expect(text('user@localhost and @scope/pkg and a@b')).toBe('user@localhost and @scope/pkg and a@b');
    expect(text(`${'x'.repeat(500)}@example.com`)).toBe('***');
  });

  it('password=, pwd:, "password": "…", secret= and friends outside URLs (the name stays)', () => {
    expect(text('login failed: password=hunter2 user=mia')).toBe('login failed: password=*** user=mia');
    expect(text('pwd: s3cr3t!, next')).toBe('pwd: ***, next');
    expect(text('{"user":"mia","password":"p\\"w d","x":1}')).toBe('{"user":"mia","password":"***","x":1}');
    expect(text('{\\"password\\":\\"hunter2\\"}')).toBe('{\\"password\\":\\"***\\"}');
    expect(text("secret = 'abc def'; token:xyz")).toBe("secret = '***'; token:***");
    expect(text('DB_PASSWORD=abc Server=x;Password=pw1;Database=y')).toBe('DB_PASSWORD=*** Server=x;Password=***;Database=y');
    expect(text('password := "go" and password => "ruby"')).toBe('password := "***" and password => "***"');
    expect(text('client_secret: 9f8e7d and refresh_token=rt_1 and session_token=st_2')).toBe('client_secret: *** and refresh_token=*** and session_token=***');
    // Header values run to the end of the line.
    expect(text('Cookie: a=1; session=xyz\nHost: example.com')).toBe('Cookie: ***\nHost: example.com');
    // Names that are not sensitive, and times and URLs, are left alone.
    expect(text('status: ok, reservation_id=ZFA04Y at 12:30 on https://example.com/a')).toBe(
      'status: ok, reservation_id=ZFA04Y at 12:30 on https://example.com/a',
    );
  });

  it('URL credentials and URL query secrets', () => {
    expect(text('clone https://deploy:p4ss@10.0.0.5:8443/repo.git')).toBe('clone https://***@10.0.0.5:8443/repo.git');
    // A host with a top-level domain after the password also reads as an e-mail address: masked too.
    expect(text('clone https://deploy:p4ss@git.internal/repo.git')).toBe('clone https://***/repo.git');
    expect(text('postgres://admin:p@ss@db/x')).toBe('postgres://***@db/x');
    expect(text('GET https://api.example.com/v1?api_key=abc123&x=1#top')).toBe('GET https://api.example.com/v1?api_key=***&x=1#top');
    expect(text('/cb?code=4/0Af&sig=zz&page=2')).toBe('/cb?code=***&sig=***&page=2');
    expect(text('ssh://git@host/x and //host:8080/y')).toBe('ssh://git@host/x and //host:8080/y');
  });

  it('JWTs, Bearer and Basic credentials', () => {
    expect(text('id eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtaWEifQ.c2lnbmF0dXJl.')).toBe('id ***.');
    expect(text('Authorization: Bearer abc.def-ghi')).toBe('Authorization: ***');
    expect(text('bearer\tXYZ==')).toBe('***');
    expect(text('Basic dXNlcjpwYXNz')).toBe('***');
    expect(text('Basic validation failed')).toBe('Basic validation failed');
  });

  it('API keys by prefix, AWS access key ids and AWS secret access keys in any separator style', () => {
    const keys = [
      'sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1',
      'sk-ant-api03-abcdefghijklmnopqrstuvwxyz',
      'sk-0123456789abcdef0123',
      'ghp_0123456789abcdefghijABCDEFGHIJ',
      'github_pat_11AAAAAAA0abcdefghij_0123456789',
      'xoxb-1234567890-abcdefghij',
      'xoxp-1234567890-abcdefghij',
      'AIzaSyA1234567890abcdefghijklmnopqrstu',
      'sk_live_4eC39HqLyjWDarjtT1zdp7dc',
      'rk_live_4eC39HqLyjWDarjtT1zdp7dc',
      'AKIAIOSFODNN7EXAMPLE',
      'ASIAIOSFODNN7EXAMPLE',
    ];
    for (const key of keys) expect(text(`use ${key} now`), key).toBe('use *** now');
    expect(text('task-management-system-v2 and desk-0123456789abcdefghij and AKIAIOSFODNN7EXAMPLEX')).toBe(
      'task-management-system-v2 and desk-0123456789abcdefghij and AKIAIOSFODNN7EXAMPLEX',
    );
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    // a 40-character secret after its access key id, in any separator style, and cut short at the end of a cut text
    for (const carrier of [
      `aws AKIAIOSFODNN7EXAMPLE ${secret}`,
      `{"AKIAIOSFODNN7EXAMPLE": "${secret}"}`,
      `{\\"ASIAIOSFODNN7EXAMPLE\\":\\"${secret}\\"}`,
      `AKIAIOSFODNN7EXAMPLE:${secret}`,
      `AKIAIOSFODNN7EXAMPLE,${secret} trailing`,
    ]) {
      const out = text(carrier);
      expect(out, carrier).not.toContain('wJalr');
      expect(out, carrier).not.toContain('IOSFODNN7EXAMPLE');
    }
    expect(createRedactor({ maxScanBytes: 40 }).text(`aws AKIAIOSFODNN7EXAMPLE ${secret}`)).not.toContain('wJalr');
    // not 40 characters, or not after a key id: left alone
    expect(text(`AKIAIOSFODNN7EXAMPLE ${secret}X`)).toBe(`*** ${secret}X`);
    expect(text(`AKIAIOSFODNN7EXAMPLE ${secret.slice(1)}`)).toBe(`*** ${secret.slice(1)}`);
    expect(text('AKIAIOSFODNN7EXAMPLE was rotated yesterday')).toBe('*** was rotated yesterday');
    for (const carrier of [
      `aws_secret_access_key = ${secret}`,
      `AWS_SECRET_ACCESS_KEY=${secret}`,
      `export AWS_SECRET_ACCESS_KEY="${secret}"`,
      `"SecretAccessKey": "${secret}"`,
      `secretAccessKey: ${secret}`,
      `aws configure set aws_secret_access_key ${secret}`,
      `--aws-secret-access-key ${secret}`,
      `[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = ${secret}\n`,
    ]) {
      const out = text(carrier);
      expect(out, carrier).not.toContain('wJalr');
      expect(out, carrier).not.toContain('AKIAIOSFODNN7EXAMPLE');
    }
  });

  it('PEM private-key blocks, also cut before their END line', () => {
    expect(text('key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----\ndone')).toBe('key:\n***\ndone');
    expect(text('-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt')).toBe('***');
    expect(text('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----')).toBe('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----');
  });

  it('card numbers: only Luhn-valid ones with an issuer prefix, whole or in groups', () => {
    expect(text('card 4111 1111 1111 1111, 4111-1111-1111-1111, 4111111111111111; amex 3782 822463 10005; mc 5555555555554444')).toBe(
      'card ***, ***, ***; amex ***; mc ***',
    );
    expect(text('paid on 2024-01-15 5555 5555 5555 4444.')).toBe('paid on 2024-01-15 ***.');
    // Glued to letters (hexadecimal trace and call ids): unchanged.
    expect(text('trace 4539148803436467ab0cd1ef23456789, call_x4539148803436467')).toBe('trace 4539148803436467ab0cd1ef23456789, call_x4539148803436467');
    // Not Luhn-valid, no issuer prefix (epoch milliseconds, order numbers), or too long: unchanged.
    expect(text('order 4111111111111112, ts 1715785200000, id 12345678901234567890123, phone +1 415-555-2671')).toBe(
      'order 4111111111111112, ts 1715785200000, id 12345678901234567890123, phone +1 415-555-2671',
    );
  });

  it('reports each finding with its family (scanSecretSpans)', () => {
    const spans = scanSecretSpans(
      'a@b.co password=x https://u:p@h/ eyJaaaaaaaaaa.bbbbbbbbbb.cccccccccc Bearer t sk-0123456789abcdef0123 SecretAccessKey: 0123456789abcdefABCD 4111111111111111',
      {
        isSensitiveKey: compileKeyMatcher(DEFAULT_SENSITIVE_KEYS).matchesNormal,
      },
    );
    expect(new Set(spans.map((span) => span.family))).toEqual(
      new Set(['email', 'credential-assignment', 'url-credentials', 'jwt', 'auth-scheme', 'api-key', 'aws-secret-key', 'card-number']),
    );
  });
});

describe('sensitive keys', () => {
  it('match in normal form: apiKey = api_key = API-KEY = x-api-key = api.key', () => {
    expect(normaliseKey('X-Api-Key')).toBe('xapikey');
    expect(normaliseKey('secretAccessKey')).toBe('secretaccesskey');
    const value = { apiKey: 1, api_key: 2, 'API-KEY': 3, 'x-api-key': 4, 'api.key': 5, ApiKeyId: 6, keyboard: 7 };
    expect(redactor.value(value)).toEqual({ apiKey: '***', api_key: '***', 'API-KEY': '***', 'x-api-key': '***', 'api.key': '***', ApiKeyId: 6, keyboard: 7 });
  });

  it('cover passwords, secrets, tokens, auth, credentials, private and access keys, cookies, cards', () => {
    const names = [
      'pwd',
      'pass',
      'Password',
      'db_password',
      'passphrase',
      'x-api-key',
      'api-key',
      'aws_secret_access_key',
      'AWS_SECRET_ACCESS_KEY',
      'SecretAccessKey',
      'secret_access_key',
      'session_token',
      'refreshToken',
      'id_token',
      'private_key',
      'privateKey',
      'client_secret',
      'clientSecret',
      'access_key',
      'aws_access_key_id',
      'credentials',
      'auth',
      'Authorization',
      'Proxy-Authorization',
      'cookie',
      'Set-Cookie',
      'credit_card_number',
      'card_number',
      'cvv',
      'ssn',
      'webhook_secret',
      'signing_key',
    ];
    for (const name of names) expect(redactor.value({ [name]: 'v' }), name).toEqual({ [name]: '***' });
    for (const name of [
      'passengers',
      'bypass',
      'max_tokens',
      'input_tokens',
      'author',
      'keyword',
      'primary_key',
      'idempotency_key',
      'secretary_name',
      'session_id',
      'token_count',
    ]) {
      expect(redactor.value({ [name]: 'v' }), name).toEqual({ [name]: 'v' });
    }
  });

  it('a secret used as a property name is masked with its value, and two such names stay apart', () => {
    expect(redactor.value({ 'sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1': 1, 'a@b.co': 2, 'c@d.io': 3 })).toEqual({ '***': '***', '*** (2)': '***', '*** (3)': '***' });
    expect(
      redactor.value(
        new Map<string, unknown>([
          ['mia@example.com', 1],
          ['password', 'x'],
          ['plain', 'y'],
        ]),
      ),
    ).toEqual([
      ['***', '***'],
      ['password', '***'],
      ['plain', 'y'],
    ]);
  });

  it('an AWS secret key whose access key id is its property name: the value is masked, in any nesting', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    expect(redactor.value({ AKIAIOSFODNN7EXAMPLE: secret })).toEqual({ '***': '***' });
    expect(redactor.value({ priority: 1, creds: [{ ASIAIOSFODNN7EXAMPLE: { value: secret } }] })).toEqual({ priority: 1, creds: [{ '***': '***' }] });
    // a long name only cut to its bound keeps its value
    const long = 'k'.repeat(2_000);
    const out = redactor.value({ [long]: 'kept' }) as Record<string, unknown>;
    expect(Object.values(out)).toEqual(['kept']);
  });

  it('configured keys replace the defaults for property names; free text still knows the defaults', () => {
    const custom = createRedactor({ keys: ['passport*'] });
    expect(custom.value({ passport_no: 'X', password: 'p' })).toEqual({ passport_no: '***', password: 'p' });
    expect(custom.text('password=p passportNo=X')).toBe('password=*** passportNo=***');
  });
});

describe('bounds of text', () => {
  it('cuts before scanning at maxScanBytes, marks the cut, and masks a secret cut in half at the end', () => {
    const small = createRedactor({ maxScanBytes: 40 });
    expect(small.text('x'.repeat(100))).toBe(`${'x'.repeat(40)}${TEXT_CUT_MARKER}`);
    expect(small.text(`${'x'.repeat(27)} sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1`)).toBe(`${'x'.repeat(27)} ***${TEXT_CUT_MARKER}`);
    expect(small.text(`${'x'.repeat(20)} eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtaWEifQ.c2lnbmF0dXJl`)).toBe(`${'x'.repeat(20)} ***${TEXT_CUT_MARKER}`);
    expect(small.text(`${'x'.repeat(24)} mia.li3818@exam.example.com`)).toBe(`${'x'.repeat(24)} ***${TEXT_CUT_MARKER}`);
    expect(small.text(`${'x'.repeat(28)} 4111 1111 1111 1111`)).toBe(`${'x'.repeat(28)} ***${TEXT_CUT_MARKER}`);
    expect(small.text('é'.repeat(30))).toBe(`${'é'.repeat(20)}${TEXT_CUT_MARKER}`);
  });

  it('applies user patterns after the built-in rules, to the cut text only', () => {
    const seen: string[] = [];
    const probe = /PASSPORT-\d+/;
    const custom = createRedactor({ patterns: [probe], maxScanBytes: 64 });
    expect(custom.text('id PASSPORT-123 mail a@b.co')).toBe('id *** mail ***');
    const long = `${'y'.repeat(70)}PASSPORT-1`;
    const out = custom.text(long);
    seen.push(out);
    expect(out).toBe(`${'y'.repeat(64)}${TEXT_CUT_MARKER}`);
  });

  it('never throws: a non-string input is read as text', () => {
    expect(redactor.text(12345 as unknown as string)).toBe('12345');
    expect(redactor.text(Symbol('x') as unknown as string)).toBe('Symbol(x)');
    const hostile = {
      toString: () => {
        throw new Error('no');
      },
    };
    expect(redactor.text(hostile as unknown as string)).toBe('***');
  });
});

describe('value on hostile inputs', () => {
  const deep = (levels: number, make: (child: unknown) => unknown) => {
    let node: unknown = 'sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1';
    for (let index = 0; index < levels; index += 1) node = make(node);
    return node;
  };

  it('10^4- and 10^6-deep objects and arrays: cut at maxDepth with a marker, no recursion overflow', () => {
    for (const levels of [10_000, 1_000_000]) {
      for (const make of [(child: unknown) => ({ child }), (child: unknown) => [child]]) {
        const out = redactor.value(deep(levels, make));
        const json = JSON.stringify(out);
        expect(json).toContain(REDACTION_MARKERS.tooDeep);
        expect(json.length).toBeLessThan(400);
      }
    }
    const shallow = createRedactor({ maxDepth: 2 });
    expect(shallow.value({ a: { b: { c: 1 } }, d: [1, [2]] })).toEqual({ a: { b: '[Too deep]' }, d: [1, '[Too deep]'] });
  });

  it('getters that throw, Proxies that throw on every trap, revoked Proxies: [Unreadable], nothing thrown', () => {
    const throwing = new Proxy(
      {},
      {
        get: () => {
          throw new Error('get');
        },
        ownKeys: () => {
          throw new Error('ownKeys');
        },
        getPrototypeOf: () => {
          throw new Error('getPrototypeOf');
        },
        has: () => {
          throw new Error('has');
        },
        getOwnPropertyDescriptor: () => {
          throw new Error('gopd');
        },
      },
    );
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    const getter = Object.defineProperty({ ok: 1 }, 'bad', {
      enumerable: true,
      get() {
        throw new Error('getter');
      },
    });
    const arrayProxy = new Proxy([1, 2], {
      get: (target, key) => {
        if (key === '0') throw new Error('index');
        return Reflect.get(target, key);
      },
    });
    expect(redactor.value({ throwing, revoked, getter, arrayProxy })).toEqual({
      throwing: '[Unreadable]',
      revoked: '[Unreadable]',
      getter: { ok: 1, bad: '[Unreadable]' },
      arrayProxy: ['[Unreadable]', 2],
    });
  });

  it('BigInt, symbols, functions, Map, Set, Date, typed arrays, buffers, null-prototype objects, boxed values, errors, toJSON, cycles', () => {
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { token: 't', a: 1 });
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const shared = { x: 1 };
    const error = new Error('failed for mia@example.com', { cause: new Error('password=hunter2') });
    const out = redactor.value({
      big: 4539148803436467n,
      small: 12n,
      sym: Symbol('sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1'),
      [Symbol('hidden')]: 'sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1',
      fn: () => 1,
      map: new Map<unknown, unknown>([
        ['a', 1],
        [{ k: 1 }, 'b@c.io'],
      ]),
      set: new Set(['x', 'mia@example.com']),
      date: new Date(0),
      invalidDate: new Date(Number.NaN),
      bytes: new Uint8Array([1, 2, 3]),
      buffer: new ArrayBuffer(8),
      view: new DataView(new ArrayBuffer(4)),
      nodeBuffer: Buffer.from('password=hunter2'),
      nullProto,
      boxed: new String('a@b.co'),
      error,
      withToJSON: { toJSON: () => ({ password: 'p', ok: true }) },
      cyclic,
      twice: [shared, shared],
      cardNumber: 4539148803436467,
      plainNumber: 1715785200000,
    });
    expect(out).toEqual({
      big: '***',
      small: '12',
      sym: 'Symbol(***)',
      fn: '[Function]',
      map: [
        ['a', 1],
        [{ k: 1 }, '***'],
      ],
      set: ['x', '***'],
      date: '1970-01-01T00:00:00.000Z',
      invalidDate: 'Invalid Date',
      bytes: '[Uint8Array 3 bytes]',
      buffer: '[ArrayBuffer 8 bytes]',
      view: '[DataView 4 bytes]',
      nodeBuffer: '[Buffer 16 bytes]',
      nullProto: { token: '***', a: 1 },
      boxed: '***',
      error: { name: 'Error', message: 'failed for ***', cause: { name: 'Error', message: 'password=***' } },
      withToJSON: { password: '***', ok: true },
      cyclic: { name: 'loop', self: '[Circular]' },
      twice: [{ x: 1 }, { x: 1 }],
      cardNumber: '***',
      plainNumber: 1715785200000,
    });
    expect(() => JSON.stringify(out)).not.toThrow();
  });

  it('bounds huge arrays, objects and graphs with counts, and the text scanned per call', () => {
    const capped = createRedactor({ maxItems: 3, maxKeys: 2, maxNodes: 50 });
    expect(capped.value([1, 2, 3, 4, 5])).toEqual([1, 2, 3, '[… 2 more items]']);
    expect(capped.value(new Set([1, 2, 3, 4]))).toEqual([1, 2, 3, '[… 1 more items]']);
    expect(capped.value({ a: 1, b: 2, c: 3, d: 4 })).toEqual({ a: 1, b: 2, '…': '[2 more keys]' });
    const sparse = new Array(1_000_000_000);
    expect(redactor.value(sparse)).toHaveLength(1001);
    // A DAG of 2^40 paths is cut by the value budget.
    let dag: unknown = 'leaf';
    for (let level = 0; level < 40; level += 1) dag = { left: dag, right: dag };
    const json = JSON.stringify(redactor.value(dag));
    expect(json).toContain(REDACTION_MARKERS.tooMany);
    expect(json.length).toBeLessThan(400_000);
    const limited = redactor.value({ a: 'x'.repeat(10_000), b: 'y'.repeat(10_000), c: 'z' }, undefined, { maxTextBytes: 12_000 }) as Record<string, string>;
    expect(limited.a).toBe('x'.repeat(10_000));
    expect(limited.b).toBe(`${'y'.repeat(12_000 - 10_000 - 2)}${TEXT_CUT_MARKER}`);
    expect(limited.c).toBe(TEXT_CUT_MARKER);
    expect(redactor.value({ ['k'.repeat(5000)]: 1 })).toEqual({ [`${'k'.repeat(1024)}${TEXT_CUT_MARKER}`]: 1 });
  });

  it('a __proto__ key is copied as data, not as a prototype', () => {
    const input = JSON.parse('{"__proto__": {"password": "p"}, "a": 1}') as unknown;
    const out = redactor.value(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(out, '__proto__')).toBe(true);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"password":"***"},"a":1}');
  });
});

describe('value: property', () => {
  const canary = fc.constantFrom(...SECRET_CANARIES);
  const padding = fc.string({ maxLength: 8 });
  const carrierText = fc.tuple(padding, canary, padding).map(([before, { carrier }, after]) => `${before} ${carrier} ${after}`);
  const key = fc.oneof(
    fc.string({ maxLength: 6 }),
    canary.map(({ carrier }) => carrier),
    canary.map(({ value }) => Object.keys(value)[0]!),
  );
  const leaf = fc.oneof(
    fc.string({ maxLength: 8 }),
    carrierText,
    fc.integer(),
    fc.bigInt(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.date(),
  );
  const withCanaries = fc.anything({
    key,
    values: [leaf],
    maxDepth: 4,
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withNullPrototype: true,
    withObjectString: true,
    withSet: true,
    withSparseArray: true,
    withTypedArray: true,
  });
  const canaryObject = canary.map(({ value }) => value as unknown);

  it('for any value with canaries anywhere (strings, keys, sensitive keys, maps, sets), value() returns JSON with no canary secret', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(withCanaries, canaryObject), { minLength: 1, maxLength: 4 }), (values) => {
        const out = redactor.value(values);
        const json = JSON.stringify(out);
        expect(typeof json).toBe('string');
        expect(leakedCanaries(json)).toEqual([]);
      }),
      { numRuns: 1500 },
    );
  });

  it('every canary, as text and as a value, is masked', () => {
    for (const { family, carrier, value } of SECRET_CANARIES) {
      expect(leakedCanaries(redactor.text(`before ${carrier} after`)), family).toEqual([]);
      expect(leakedCanaries(JSON.stringify(redactor.value(value))), family).toEqual([]);
      expect(leakedCanaries(redactor.text(JSON.stringify(value))), `${family} (JSON text)`).toEqual([]);
    }
  });
});

describe('generated ids', () => {
  const hexOf = (bytes: Uint8Array) => [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  // A pattern that never matches forces the full scan of the built-in families.
  const scanned = createRedactor({ patterns: [/(?!)/] });
  const quick = createRedactor();

  it('a call id or trace id of the runtime is left as it is, exactly as the full scan of every family leaves it', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const hex = hexOf(bytes);
        for (const id of [hex, `call_${hex}`]) {
          expect(scanned.text(id)).toBe(id);
          expect(quick.text(id)).toBe(id);
        }
      }),
      { numRuns: 2000 },
    );
    for (const hex of ['4111111111111111abcdef0123456789', '41111111111111110000000000000000', 'abcdefabcdefabcd4111111111111111']) {
      expect(scanned.text(hex)).toBe(hex);
      expect(quick.text(`call_${hex}`)).toBe(`call_${hex}`);
    }
  });

  it('the same text still goes through extra patterns, and a text of another shape through the families', () => {
    expect(createRedactor({ patterns: [/call_[0-9a-f]+/] }).text(`call_${'ab'.repeat(16)}`)).toBe('***');
    expect(quick.text('4111111111111111')).toBe('***');
    expect(quick.text(`call_${'AB'.repeat(16)}`)).toBe(scanned.text(`call_${'AB'.repeat(16)}`));
  });
});
