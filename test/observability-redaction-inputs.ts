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
