/**
 * The one migration runner of the SQL backends. A backend's layout is a {@link SchemaHistory}: a
 * baseline that creates the whole schema in an empty database, then the migrations written after
 * it. Each backend applies what {@link migrationsToApply} returns in one transaction that holds its
 * migration lock (PostgreSQL: a transaction-scoped advisory lock on the schema's name; SQLite: an
 * IMMEDIATE transaction), recording each version in `schema_version (version, applied_at)`, so two
 * processes starting at once migrate once: the second waits, then finds the work done.
 */
import { ToolrunError } from '../ground/toolrun-error.ts';

/** One version of a schema: the SQL that brings the version before it (or, for a baseline, an empty database) to this one. */
export interface SchemaMigration {
  readonly version: number;
  readonly sql: string;
}

/** A backend's schema: the baseline, then the migrations after it in ascending version order. */
export interface SchemaHistory {
  /** The backend, as errors name it: `'PostgreSQL'`, `'SQLite'`. */
  readonly backend: string;
  readonly baseline: SchemaMigration;
  readonly migrations: readonly SchemaMigration[];
}

/** A store's schema as errors name it. */
export interface SchemaLocation {
  /** `the PostgreSQL schema "toolrun"`, `the SQLite file ./toolrun.db`. */
  readonly name: string;
  /** How to drop it so that toolrun creates it again: `DROP SCHEMA "toolrun" CASCADE`. */
  readonly recreate: string;
}

/** The table every backend records its applied versions in (`table` already quoted as needed). */
export function schemaVersionTableSql(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`;
}

/** The version a schema has once every migration of `history` is applied. */
export function latestSchemaVersion(history: SchemaHistory): number {
  return history.migrations.at(-1)?.version ?? history.baseline.version;
}

/**
 * The {@link ToolrunError} (code `STORE_UNAVAILABLE`) thrown when a store's schema has a version
 * this toolrun cannot open: older than its baseline (written by a development build before the
 * first release: drop the schema or delete the file and let toolrun create it again) or newer than
 * its latest version (written by a newer toolrun: upgrade toolrun). Nothing is changed.
 */
export class SchemaVersionError extends ToolrunError {
  /** The backend: `'PostgreSQL'` or `'SQLite'`. */
  readonly backend: string;
  /** The highest version the schema's `schema_version` table records. */
  readonly foundVersion: number;
  /** The versions this toolrun opens, both ends included. */
  readonly supportedVersions: { readonly oldest: number; readonly newest: number };

  /**
   * @param message - what is wrong and how to fix it
   * @param details - the backend, the version found and the versions supported
   */
  constructor(message: string, details: { backend: string; foundVersion: number; supportedVersions: { oldest: number; newest: number } }) {
    super('STORE_UNAVAILABLE', message);
    this.name = 'SchemaVersionError';
    this.backend = details.backend;
    this.foundVersion = details.foundVersion;
    this.supportedVersions = { oldest: details.supportedVersions.oldest, newest: details.supportedVersions.newest };
  }
}

/** The refusal of a schema at `foundVersion`, naming the versions and what to do. */
function unsupportedVersion(history: SchemaHistory, foundVersion: number, location: SchemaLocation): SchemaVersionError {
  const oldest = history.baseline.version;
  const newest = latestSchemaVersion(history);
  const supported = oldest === newest ? `version ${oldest}` : `versions ${oldest} to ${newest}`;
  const fix =
    foundVersion > newest
      ? 'it was written by a newer toolrun: upgrade toolrun'
      : 'it was written by a development build before the first release, whose data cannot be kept: ' + `${location.recreate} and toolrun creates it again`;
  return new SchemaVersionError(`${location.name} has schema version ${foundVersion}; this toolrun opens ${supported} only (${fix})`, {
    backend: history.backend,
    foundVersion,
    supportedVersions: { oldest, newest },
  });
}

/**
 * What brings a schema to {@link latestSchemaVersion}, in the order to apply it: for a new schema
 * (`foundVersion` null: its version table records nothing) the baseline and every migration after
 * it; for one at a supported version, the migrations newer than it (none when it is current).
 *
 * @param location - the store, as an error names it
 * @throws SchemaVersionError when `foundVersion` is older than the baseline or newer than the latest version.
 */
export function migrationsToApply(history: SchemaHistory, foundVersion: number | null, location: SchemaLocation): readonly SchemaMigration[] {
  if (foundVersion === null) return [history.baseline, ...history.migrations];
  if (foundVersion < history.baseline.version || foundVersion > latestSchemaVersion(history)) {
    throw unsupportedVersion(history, foundVersion, location);
  }
  return history.migrations.filter((migration) => migration.version > foundVersion);
}
