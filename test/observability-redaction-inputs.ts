/**
 * Adversarial inputs of the redactor, one or more per secret family: texts built to make a
 * backtracking rule retry from every position (one `@` after a megabyte of word characters, `a.a.a.`,
 * `eyJ` repeated, …). Shared by the linear-time test (run under a hard bound in a worker thread) and
 * by `bench/redaction.bench.ts`.
 */
import { createRedactor } from '../src/core/redact.ts';
import { compileKeyMatcher, DEFAULT_SENSITIVE_KEYS } from '../src/core/redact-keys.ts';
import { scanSecrets } from '../src/core/redact-scan.ts';

/** `unit` repeated to exactly `length` code units, ending with `tail`. */
function fill(unit: string, length: number, tail = ''): string {
  const body = Math.max(0, length - tail.length);
  return unit.repeat(Math.ceil(body / unit.length)).slice(0, body) + tail;
}

/** Input generators by name: each returns a text of exactly `length` code units. */
export const ADVERSARIAL_INPUTS: Readonly<Record<string, (length: number) => string>> = {
  'email: one @ after word characters': (length) => fill('a', length, '@'),
  'email: @ then a.a.a.': (length) => `@${fill('a.', length - 1)}`,
  'email: a@a@a@': (length) => fill('a@', length),
  'email: dotted locals and domains': (length) => fill('ab.cd@ef.gh@', length),
  'assignment: aaaa…=': (length) => fill('a', length, '='),
  'assignment: password=password=…': (length) => fill('password=', length),
  'assignment: pwd:pwd:…': (length) => fill('pwd:', length),
  'assignment: "password": " unclosed': (length) => fill('"password": "', length),
  'url credentials: ////': (length) => fill('/', length),
  'url credentials: //a:b//a:b': (length) => fill('//a:b', length),
  'url credentials: //:@:@': (length) => `//${fill(':@', length - 2)}`,
  'url query: ?token=&token=': (length) => fill('?token=&', length),
  'jwt: eyJ repeated': (length) => fill('eyJ', length),
  'jwt: eyJaaaaaaaaaa. repeated': (length) => fill('eyJaaaaaaaaaa.', length),
  'jwt: -eyJ repeated': (length) => fill('-eyJ', length),
  'auth scheme: Bearer repeated': (length) => fill('Bearer ', length),
  'auth scheme: basic repeated': (length) => fill('basic ', length),
  'api key: sk- repeated': (length) => fill('sk-', length),
  'api key: ghp_ repeated': (length) => fill('ghp_', length),
  'api key: AKIA repeated': (length) => fill('AKIA', length),
  'api key: xoxb- repeated': (length) => fill('xoxb-', length),
  'aws secret: secret_access_key repeated': (length) => fill('secret_access_key ', length),
  'aws secret: SecretAccessKey= repeated': (length) => fill('SecretAccessKey=', length),
  'private key: BEGIN repeated': (length) => fill('-----BEGIN PRIVATE KEY-----', length),
  'private key: END repeated': (length) => `-----BEGIN PRIVATE KEY-----${fill('-----END ', length - 27)}`,
  'card: one digit run': (length) => fill('4', length),
  'card: 4111 groups': (length) => fill('4111 ', length),
  'card: single digits': (length) => fill('4 ', length),
  'card: 411- groups': (length) => fill('411-', length),
  'clean: prose': (length) => fill('The quick brown fox jumps over the lazy dog. ', length),
  'clean: JSON': (length) => fill('{"a":1,"b":[2,3],"c":"d"},', length),
};

const matcher = compileKeyMatcher(DEFAULT_SENSITIVE_KEYS);
const scanOptions = { isSensitiveKey: matcher.matchesNormal };

/** Scanner steps (characters examined) of each input at `length` code units. */
export function adversarialSteps(length: number): Record<string, number> {
  const steps: Record<string, number> = {};
  for (const [name, make] of Object.entries(ADVERSARIAL_INPUTS)) steps[name] = scanSecrets(make(length), scanOptions).steps;
  return steps;
}

/**
 * For the bounded test: redacts every input at 1 KB and at `input.length` code units with a
 * redactor that scans it whole, and returns the steps of both sizes and the output lengths.
 */
export function redactAdversarialInputs(input: { length: number }): Array<{ name: string; stepsSmall: number; stepsLarge: number; outputLength: number }> {
  const redactor = createRedactor({ maxScanBytes: Number.POSITIVE_INFINITY });
  return Object.entries(ADVERSARIAL_INPUTS).map(([name, make]) => {
    const large = make(input.length);
    return {
      name,
      stepsSmall: scanSecrets(make(1000), scanOptions).steps,
      stepsLarge: scanSecrets(large, scanOptions).steps,
      outputLength: redactor.text(large).length,
    };
  });
}

/** The old e-mail rule, for the bounded test's control: a backtracking pattern that retries from every position. */
export function redactWithBacktrackingEmailRule(input: { length: number }): number {
  const text = fill('a', input.length, '@');
  return text.replace(/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, '***').length;
}

/**
 * One canary per secret family: `carrier` is how it appears in text (what a tool, a model or a
 * user writes), `secret` the part that must never come out of any sink. `value` is how it appears
 * as a property of tool arguments (a sensitive key, or a string value).
 */
export interface SecretCanary {
  family: string;
  carrier: string;
  secret: string;
  value: Record<string, string>;
}

export const SECRET_CANARIES: readonly SecretCanary[] = [
  { family: 'e-mail address', carrier: 'canary.q7ht2x@example.com', secret: 'canary.q7ht2x@example.com', value: { contact: 'canary.q7ht2x@example.com' } },
  { family: 'password= in free text', carrier: 'password=Pw9canaryXz', secret: 'Pw9canaryXz', value: { password: 'Pw9canaryXz' } },
  { family: 'pwd: in free text', carrier: 'pwd: Pwd4canaryQv', secret: 'Pwd4canaryQv', value: { pwd: 'Pwd4canaryQv' } },
  { family: '"secret": in JSON text', carrier: '{"client_secret": "Sec8canaryJs"}', secret: 'Sec8canaryJs', value: { client_secret: 'Sec8canaryJs' } },
  {
    family: 'URL credentials',
    carrier: 'https://deploy:Url5canaryPw@git.internal/repo.git',
    secret: 'Url5canaryPw',
    value: { remote: 'https://deploy:Url5canaryPw@git.internal/repo.git' },
  },
  {
    family: 'URL query secret',
    carrier: 'https://api.example.com/v1/items?api_key=Qry7canaryTok&page=2',
    secret: 'Qry7canaryTok',
    value: { url: 'https://api.example.com/v1/items?api_key=Qry7canaryTok&page=2' },
  },
  {
    family: 'JWT',
    carrier: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.SflKxwRJSMeKKF2QT4fwpCanaryJwtSig',
    secret: 'SflKxwRJSMeKKF2QT4fwpCanaryJwtSig',
    value: { session: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.SflKxwRJSMeKKF2QT4fwpCanaryJwtSig' },
  },
  {
    family: 'Bearer token',
    carrier: 'Authorization: Bearer tok9canary8e7d6c5b4a3210ZYX',
    secret: 'tok9canary8e7d6c5b4a3210ZYX',
    value: { header: 'Bearer tok9canary8e7d6c5b4a3210ZYX' },
  },
  {
    family: 'Basic credentials',
    carrier: 'Basic ZGVwbG95OmNhbmFyeVB3Q2FuYXJ5',
    secret: 'ZGVwbG95OmNhbmFyeVB3Q2FuYXJ5',
    value: { header: 'Basic ZGVwbG95OmNhbmFyeVB3Q2FuYXJ5' },
  },
  {
    family: 'OpenAI key',
    carrier: 'sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1Canary',
    secret: 'Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1Canary',
    value: { note: 'key sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1Canary' },
  },
  {
    family: 'Anthropic key',
    carrier: 'sk-ant-api03-Canary7xYz0123456789abcdefAA',
    secret: 'Canary7xYz0123456789abcdefAA',
    value: { note: 'sk-ant-api03-Canary7xYz0123456789abcdefAA' },
  },
  {
    family: 'GitHub token',
    carrier: 'ghp_Canary0123456789abcdefghijABCDEFGHIJ',
    secret: 'Canary0123456789abcdefghijABCDEFGHIJ',
    value: { note: 'ghp_Canary0123456789abcdefghijABCDEFGHIJ' },
  },
  {
    family: 'GitHub fine-grained token',
    carrier: 'github_pat_11ABCDEFG0canary_0123456789abcdefghij',
    secret: '11ABCDEFG0canary_0123456789abcdefghij',
    value: { note: 'github_pat_11ABCDEFG0canary_0123456789abcdefghij' },
  },
  {
    family: 'Slack token',
    carrier: 'xoxb-123456789012-Canary0abcdef',
    secret: '123456789012-Canary0abcdef',
    value: { note: 'xoxb-123456789012-Canary0abcdef' },
  },
  {
    family: 'Google API key',
    carrier: 'AIzaSyCanary0123456789abcdefghijklmnopq',
    secret: 'SyCanary0123456789abcdefghijklmnopq',
    value: { note: 'AIzaSyCanary0123456789abcdefghijklmnopq' },
  },
  {
    family: 'Stripe secret key',
    carrier: 'sk_live_51CanaryStripe0123456789abcdef',
    secret: '51CanaryStripe0123456789abcdef',
    value: { note: 'sk_live_51CanaryStripe0123456789abcdef' },
  },
  {
    family: 'Stripe restricted key',
    carrier: 'rk_live_51CanaryRestricted0123456789ab',
    secret: '51CanaryRestricted0123456789ab',
    value: { note: 'rk_live_51CanaryRestricted0123456789ab' },
  },
  { family: 'AWS access key id', carrier: 'AKIAQ7HT2XCANARY0001', secret: 'Q7HT2XCANARY0001', value: { note: 'AKIAQ7HT2XCANARY0001' } },
  {
    family: 'AWS secret access key',
    carrier: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARYKEY1',
    secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARYKEY1',
    value: { aws_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARYKEY1' },
  },
  {
    family: 'AWS secret in .aws/credentials',
    carrier: '[default]\nAWS_SECRET_ACCESS_KEY=Zk3canaryAwsSecretAccessKeyValue000000001',
    secret: 'Zk3canaryAwsSecretAccessKeyValue000000001',
    value: { SecretAccessKey: 'Zk3canaryAwsSecretAccessKeyValue000000001' },
  },
  {
    family: 'AWS secret keyed by its access key id',
    carrier: '{"AKIAQ7HT2XCANARY0002": "W9kCanaryAwsPairedSecret0000000000000002"}',
    secret: 'W9kCanaryAwsPairedSecret0000000000000002',
    value: { AKIAQ7HT2XCANARY0002: 'W9kCanaryAwsPairedSecret0000000000000002' },
  },
  {
    family: 'AWS secret after its access key id',
    carrier: 'aws AKIAQ7HT2XCANARY0003 Zq1CanaryAwsFreeText/Secret0000000000003',
    secret: 'Zq1CanaryAwsFreeText/Secret0000000000003',
    value: { note: 'aws AKIAQ7HT2XCANARY0003 Zq1CanaryAwsFreeText/Secret0000000000003' },
  },
  {
    family: 'PEM private key',
    carrier: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjCanaryPem\n-----END PRIVATE KEY-----',
    secret: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjCanaryPem',
    value: { note: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjCanaryPem\n-----END PRIVATE KEY-----' },
  },
  { family: 'card number (Luhn)', carrier: '4539 1488 0343 6467', secret: '4539 1488 0343 6467', value: { note: 'card 4539 1488 0343 6467' } },
  { family: 'sensitive header key', carrier: 'x-api-key: Hdr3canaryKey', secret: 'Hdr3canaryKey', value: { 'X-Api-Key': 'Hdr3canaryKey' } },
  {
    family: 'secret as a property name',
    carrier: 'sk-proj-Prop4canaryName0123456789',
    secret: 'Prop4canaryName0123456789',
    value: { 'sk-proj-Prop4canaryName0123456789': 'x' },
  },
];

/** The canary secrets found in `text`, by family. */
export function leakedCanaries(text: string): string[] {
  return SECRET_CANARIES.filter((canary) => text.includes(canary.secret)).map((canary) => canary.family);
}
