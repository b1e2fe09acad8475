import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createAjvSchemaValidator } from '../../src/schema/ajv-schema-validator.ts';
import { bookingSchema, invalidBooking } from './no-eval-cases.ts';

/**
 * The default validator where code generation from strings is refused, as in Cloudflare Workers:
 * Node with `--disallow-code-generation-from-strings` makes `new Function` throw, so Ajv cannot
 * compile; the `auto` engine must switch to the interpreter and give the same failure.
 */
describe('the default validator without code generation', () => {
  it('switches to the interpreter and gives the same failure as Ajv', () => {
    const fixture = fileURLToPath(new URL('./no-eval-fixture.ts', import.meta.url));
    const run = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '--import', 'tsx', fixture], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const printed = JSON.parse(run.stdout) as { codeGeneration: boolean; failure: unknown; second: unknown };
    expect(printed.codeGeneration).toBe(false);
    const withAjv = createAjvSchemaValidator({ jsonSchemaEngine: 'ajv' });
    expect(printed.failure).toEqual(withAjv.compile(bookingSchema, { coerce: 'none' }).validate(invalidBooking));
    expect(printed.failure).toMatchObject({
      ok: false,
      code: 'SCHEMA_VALIDATION_FAILED',
      fields: [{ path: '/pasengers' }, { path: '/date' }, { path: '/passengers' }, { path: '/cabin' }, { path: '/code' }],
    });
    expect(printed.second).toEqual(withAjv.compile({ type: 'integer', minimum: 1 }, { coerce: 'none' }).validate(0));
  }, 90_000);

  it('Ajv itself fails there: the switch is what makes it work', () => {
    const run = spawnSync(
      process.execPath,
      [
        '--disallow-code-generation-from-strings',
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        "import { createAjvSchemaValidator } from './src/schema/ajv-schema-validator.ts'; try { createAjvSchemaValidator({ jsonSchemaEngine: 'ajv' }).compile({ type: 'string' }, { coerce: 'none' }); console.log('compiled'); } catch (error) { console.log(error.code, String(error.message).includes('Code generation from strings disallowed')); }",
      ],
      { encoding: 'utf8', timeout: 60_000, cwd: fileURLToPath(new URL('../..', import.meta.url)) },
    );
    expect(run.stdout.trim()).toBe('INVALID_SCHEMA true');
  }, 90_000);
});
