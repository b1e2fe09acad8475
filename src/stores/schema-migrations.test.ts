import { describe, expect, it } from 'vitest';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { latestSchemaVersion, migrationsToApply, SchemaVersionError, type SchemaHistory } from './schema-migrations.ts';

const location = { name: 'the test schema "t"', recreate: 'DROP SCHEMA "t" CASCADE' };
const baselineOnly: SchemaHistory = { backend: 'Test', baseline: { version: 12, sql: 'CREATE TABLE a ()' }, migrations: [] };
const withMigrations: SchemaHistory = {
  ...baselineOnly,
  migrations: [
    { version: 13, sql: 'ALTER TABLE a ADD b int' },
    { version: 14, sql: 'ALTER TABLE a ADD c int' },
  ],
};

function refusal(history: SchemaHistory, foundVersion: number): SchemaVersionError {
  try {
    migrationsToApply(history, foundVersion, location);
  } catch (error) {
    if (error instanceof SchemaVersionError) return error;
    throw error;
  }
  throw new Error(`expected version ${foundVersion} to be refused`);
}

describe('migrationsToApply', () => {
  it('gives a new schema the baseline, then every migration after it', () => {
    expect(migrationsToApply(baselineOnly, null, location)).toEqual([baselineOnly.baseline]);
    expect(migrationsToApply(withMigrations, null, location).map((migration) => migration.version)).toEqual([12, 13, 14]);
  });

  it('gives a schema at a supported version the migrations newer than it, none when it is current', () => {
    expect(migrationsToApply(baselineOnly, 12, location)).toEqual([]);
    expect(migrationsToApply(withMigrations, 12, location).map((migration) => migration.version)).toEqual([13, 14]);
    expect(migrationsToApply(withMigrations, 13, location).map((migration) => migration.version)).toEqual([14]);
    expect(migrationsToApply(withMigrations, 14, location)).toEqual([]);
  });

  it('refuses a schema older than the baseline, naming the versions and how to recreate it', () => {
    for (const found of [1, 11]) {
      const error = refusal(withMigrations, found);
      expect(ToolrunError.is(error)).toBe(true);
      expect(error).toMatchObject({ name: 'SchemaVersionError', code: 'STORE_UNAVAILABLE', backend: 'Test', foundVersion: found });
      expect(error.supportedVersions).toEqual({ oldest: 12, newest: 14 });
      expect(error.message).toBe(
        `the test schema "t" has schema version ${found}; this toolrun opens versions 12 to 14 only ` +
          '(it was written by a development build before the first release, whose data cannot be kept: DROP SCHEMA "t" CASCADE and toolrun creates it again)',
      );
    }
  });

  it('refuses a schema newer than the latest version, asking for a newer toolrun', () => {
    const error = refusal(baselineOnly, 13);
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', foundVersion: 13, supportedVersions: { oldest: 12, newest: 12 } });
    expect(error.message).toBe(
      'the test schema "t" has schema version 13; this toolrun opens version 12 only (it was written by a newer toolrun: upgrade toolrun)',
    );
    expect(refusal(withMigrations, 15).supportedVersions).toEqual({ oldest: 12, newest: 14 });
  });
});

describe('latestSchemaVersion', () => {
  it('is the last migration, or the baseline when there is none', () => {
    expect(latestSchemaVersion(baselineOnly)).toBe(12);
    expect(latestSchemaVersion(withMigrations)).toBe(14);
  });
});
