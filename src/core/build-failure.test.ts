import { describe, expect, it } from 'vitest';
import { redactBounded, sanitiseErrorText } from './build-failure.ts';
import { createRedactor } from './redact.ts';

const encoder = new TextEncoder();

describe('redactBounded', () => {
  const redactor = createRedactor();

  it('scans only the bound plus the margin: the redactor sees at most maxBytes + 4096 code units of a 1 MB text', () => {
    const seen: number[] = [];
    const spy = { text: (text: string) => (seen.push(text.length), redactor.text(text)) };
    const out = redactBounded(spy, 'x'.repeat(1_000_000), 200);
    expect(seen).toEqual([200 + 4096]);
    expect(encoder.encode(out).length).toBeLessThanOrEqual(200);
    expect(out.endsWith('… [truncated]')).toBe(true);
  });

  it('redacts a secret inside the bound', () => {
    const out = redactBounded(redactor, `token Bearer abcdefghijklmnopqrstuvwxyz0123456789 ${'y'.repeat(1_000_000)}`, 200);
    expect(out).not.toContain('abcdefghijklmnopqrstuvwxyz0123456789');
    expect(encoder.encode(out).length).toBeLessThanOrEqual(200);
  });

  it('widens the margin when redaction shrinks the cut by more than half of it', () => {
    const seen: number[] = [];
    const out = redactBounded({ text: (input) => (seen.push(input.length), 'short') }, 'z'.repeat(50_000), 100);
    // 4196, then margins of 8192, 16384, 32768 code units, then the whole 50,000-unit text fits.
    expect(seen).toEqual([4196, 8292, 16484, 32868, 50_000]);
    expect(out).toBe('short');
  });

  it('does not let a secret split by the first cut into the output when redaction shrinks the text before it', () => {
    // Many e-mail addresses shrink under redaction, pulling the tail of the first cut forward; the
    // secret at the first cut is split there and would not be recognised.
    const emails = 'someone.with.a.long.name@example.com '.repeat(200);
    const secret = 'SECRETSECRETSECRET';
    const text = emails + 'q'.repeat(Math.max(0, 100 + 4096 - emails.length - 9)) + secret + 'r'.repeat(10_000);
    const masking = { text: (input: string) => input.replace(/someone\.with\.a\.long\.name@example\.com/g, '*').replace(/SECRETSECRETSECRET/g, '***') };
    const out = redactBounded(masking, text, 8_000);
    expect(out).not.toContain('SECRET');
  });

  it('never leaves a lone surrogate at the first cut', () => {
    const text = `${'a'.repeat(99 + 4096)}${'😀'.repeat(10)}`;
    const out = redactBounded({ text: (input) => input }, text, 100);
    expect(encoder.encode(out).length).toBeLessThanOrEqual(100);
    expect(/[\ud800-\udbff](?![\udc00-\udfff])/.test(out)).toBe(false);
  });
});

describe('sanitiseErrorText', () => {
  it('drops JavaScript stack frames and host paths', () => {
    expect(sanitiseErrorText('TypeError: x is not a function\n    at f (/home/u/app/x.js:1:2)\n    at Object.<anonymous> (file:///work/app/y.mjs:3:4)')).toBe(
      'TypeError: x is not a function',
    );
    expect(sanitiseErrorText("Error: ENOENT: no such file or directory, open '/home/me/proj/config.json'")).toBe(
      "Error: ENOENT: no such file or directory, open '<path>'",
    );
  });

  it('drops a Go goroutine dump (goroutine 1 [running]:, function lines, /src/x.go:12 +0x1d) and keeps what follows it', () => {
    const go =
      'panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/x.go:12 +0x1d\nmain.(*T).f(0xc000010000, {0x4b2f60, 0x3})\n\t/src/y.go:3 +0x2a\ncreated by main.start in goroutine 1\n\t/src/z.go:9 +0x3\n\ngoroutine 2 [chan receive]:\nmain.w()\n\t/src/x.go:20 +0x1\nexit status 2';
    expect(sanitiseErrorText(go)).toBe('panic: runtime error: index out of range [5] with length 3\n\nexit status 2');
    expect(sanitiseErrorText('read failed at /src/x.go:12 +0x1d')).toBe('read failed');
  });

  it('drops Java frames, Caused by: and ... 5 more', () => {
    const java =
      'java.lang.IllegalStateException: bad state\n\tat com.foo.Bar.baz(Bar.java:12)\n\tat com.foo.Main.main(Main.java:5)\nCaused by: java.io.IOException: disk full\n\tat com.foo.Io.w(Io.java:3)\n\t... 5 more';
    expect(sanitiseErrorText(java)).toBe('java.lang.IllegalStateException: bad state');
  });

  it('drops a Python traceback (header, File lines and their source lines) and keeps the exception line', () => {
    const python =
      'Traceback (most recent call last):\n  File "/app/x.py", line 3, in f\n    raise ValueError("bad")\n  File "/app/y.py", line 9, in g\n    f()\nValueError: bad value';
    expect(sanitiseErrorText(python)).toBe('ValueError: bad value');
    const chained = `${python}\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File "/app/z.py", line 1, in <module>\n    g()\nRuntimeError: wrapped`;
    expect(sanitiseErrorText(chained)).toBe('ValueError: bad value\n\n\nRuntimeError: wrapped');
  });

  it('replaces Windows, UNC and POSIX host paths, and keeps API routes and URLs', () => {
    expect(sanitiseErrorText('open C:\\Users\\bob\\My Documents\\notes.txt failed')).toBe('open <path> failed');
    expect(sanitiseErrorText('copy to \\\\server\\share\\dir\\f.txt failed')).toBe('copy to <path> failed');
    expect(sanitiseErrorText('config /etc/app/conf.yaml; module /opt/x/y.js:12:3; key ~/keys/id_rsa')).toBe('config <path>; module <path>; key <path>');
    expect(sanitiseErrorText('load /srv/build/lib/parser.py failed')).toBe('load <path> failed');
    expect(sanitiseErrorText('a script at /x/y/run.sh failed')).toBe('a script failed');
    expect(sanitiseErrorText('GET /v1/users/42 returned 404, see https://api.example.com/v1/docs/errors.html')).toBe(
      'GET /v1/users/42 returned 404, see https://api.example.com/v1/docs/errors.html',
    );
  });
});
