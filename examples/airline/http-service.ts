/**
 * A small local HTTP service that serves the 14 airline tools, so toolrun's tools call a real
 * server with `fetch` and meet real network failures (injected on purpose by a fault profile).
 *
 * Routes: `POST /tools/<name>` (or `POST /runs/<runId>/tools/<name>`) with the JSON arguments as
 * body. Headers: `x-run-id` (the run; faults are drawn per run), `x-inject-fault` (a fault chosen by
 * the client, honoured only with `faultHeader`), `x-database-key` (which database
 * the call works on; defaults to the run id: send the conversation's key to let the runs of one
 * conversation share their bookings), `idempotency-key` (a write sent again with the same key is
 * answered from the stored response and not applied twice).
 *
 * Answers: `200 {"result": …}`; business refusals `404/409/422 {"error": {"kind", "message", "code"}}`
 * (`not_found` / `precondition` / `invalid_input`); `400` for a body that is not a JSON object;
 * injected faults `401` (auth), `429` with `Retry-After` (rate_limit), `503` (server), or no answer
 * at all (hang); `500` if a tool crashes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ToolError } from '../../src/core/tool-error.ts';
import { createAirlineDatabase, type AirlineDatabase, type AirlineDataEra } from './database.ts';
import { drawFault, type AirlineFault, type AirlineFaultProfile } from './fault-profile.ts';
import { AIRLINE_WRITE_TOOLS, airlineOperations, isAirlineToolName, type AirlineToolName } from './operations.ts';

/** Options of {@link startAirlineService}. */
export interface AirlineServiceOptions {
  /** Faults to inject. @defaultValue no faults */
  faultProfile?: AirlineFaultProfile;
  /** Seed of the fault draw: the same seed gives the same faults for the same calls. @defaultValue 0 */
  seed?: number | string;
  /** Data version each new database starts from. @defaultValue 'shipped' */
  era?: AirlineDataEra;
  /** Databases kept (least recently used evicted first). @defaultValue 5000 */
  maxDatabases?: number;
  /** Factory of a fresh database (tests). @defaultValue `createAirlineDatabase({ era })` */
  createDatabase?: () => AirlineDatabase;
  /** Called for every tool request once its fault is drawn (before it is answered). */
  onRequest?: (event: AirlineRequestEvent) => void;
  /** Let the process exit while the service listens (a service started for a command's lifetime). @defaultValue false */
  unref?: boolean;
  /**
   * Honour an `x-inject-fault: unavailable | rate_limit | hang` request header: the request gets
   * that fault instead of a drawn one (a seeded fault plan decided by the client, as the eval does).
   * @defaultValue false
   */
  faultHeader?: boolean;
}

/** One tool request as the service saw it. */
export interface AirlineRequestEvent {
  runId: string;
  databaseKey: string;
  toolName: AirlineToolName;
  idempotencyKey: string | undefined;
  /** 0-based index of the call among the run's calls of this tool. */
  callIndex: number;
  /** 1-based attempt (requests seen with this idempotency key). */
  attempt: number;
  fault: AirlineFault;
}

/** One write applied to a database, with how many times it was applied (must stay 1). */
export interface AppliedMutation {
  databaseKey: string;
  runId: string;
  /** The request's `idempotency-key`, or `(none)#<n>` when it had none. */
  idempotencyKey: string;
  toolName: AirlineToolName;
  applications: number;
}

/** Counters of a running service. */
export interface AirlineServiceStats {
  requests: number;
  /** Answers by HTTP status (`'hang'` for requests never answered). */
  responsesByStatus: Record<string, number>;
  faults: Record<AirlineFault, number>;
  /** Writes actually applied to a database. */
  mutationsApplied: number;
  /** Writes answered from the idempotency store instead of being applied again. */
  idempotentReplays: number;
  /** Highest number of applications of one (database, idempotency key): 1 means no write was applied twice. */
  maxApplicationsPerKey: number;
  databases: number;
}

/** A running airline service. */
export interface AirlineService {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Stops listening and drops every open connection (held hangs included). */
  close(): Promise<void>;
  /** Replaces the fault profile (e.g. to clear the faults before a drain). */
  setFaultProfile(profile: AirlineFaultProfile): void;
  stats(): AirlineServiceStats;
  /** The database of a key, if the service has one (to check the effects of a run). */
  database(databaseKey: string): AirlineDatabase | undefined;
  /** Every applied write, in order of first application. */
  mutations(): AppliedMutation[];
}

interface StoredResponse {
  status: number;
  body: string;
}

interface DatabaseState {
  database: AirlineDatabase;
  /** Stored answers of writes, by idempotency key. */
  responses: Map<string, StoredResponse>;
  /** Per `runId|tool`: call index of each idempotency key, and the next free index. */
  callIndexes: Map<string, { next: number; byKey: Map<string, number> }>;
  /** Requests seen per `runId|idempotencyKey` (the attempt count). */
  attempts: Map<string, number>;
}

const REFUSAL_STATUS = { not_found: 404, precondition: 409, invalid_input: 422 } as const;
const MAX_BODY_BYTES = 1_000_000;

function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function headerValue(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? undefined : text;
}

function errorBody(kind: string, message: string, code?: string): string {
  return JSON.stringify({ error: code === undefined ? { kind, message } : { kind, message, code } });
}

/**
 * Starts the service on 127.0.0.1, on a free port.
 *
 * @returns once it listens. Not safe to share one service between two workloads that use the same
 *   run ids. Requests of one run should be sequential (as one agent run's are).
 */
export async function startAirlineService(options: AirlineServiceOptions = {}): Promise<AirlineService> {
  let profile: AirlineFaultProfile = options.faultProfile ?? {};
  const seed = options.seed ?? 0;
  const maxDatabases = options.maxDatabases ?? 5000;
  const newDatabase = options.createDatabase ?? (() => createAirlineDatabase({ era: options.era ?? 'shipped' }));
  const databases = new Map<string, DatabaseState>();
  const applied = new Map<string, AppliedMutation>();
  const stats: AirlineServiceStats = {
    requests: 0,
    responsesByStatus: {},
    faults: { none: 0, unavailable: 0, rate_limit: 0, hang: 0, unauthorized: 0 },
    mutationsApplied: 0,
    idempotentReplays: 0,
    maxApplicationsPerKey: 0,
    databases: 0,
  };

  const stateOf = (databaseKey: string): DatabaseState => {
    let state = databases.get(databaseKey);
    if (state === undefined) {
      state = { database: newDatabase(), responses: new Map(), callIndexes: new Map(), attempts: new Map() };
    } else {
      databases.delete(databaseKey);
    }
    databases.set(databaseKey, state);
    while (databases.size > maxDatabases) databases.delete(databases.keys().next().value as string);
    stats.databases = databases.size;
    return state;
  };

  const send = (response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    stats.responsesByStatus[status] = (stats.responsesByStatus[status] ?? 0) + 1;
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(body);
  };

  /** Runs the tool (or returns the stored answer of a repeated write). */
  const execute = (
    state: DatabaseState,
    identity: { databaseKey: string; runId: string; toolName: AirlineToolName; idempotencyKey: string | undefined },
    args: Record<string, unknown>,
  ): StoredResponse & { replayed: boolean } => {
    const isWrite = AIRLINE_WRITE_TOOLS.has(identity.toolName);
    if (isWrite && identity.idempotencyKey !== undefined) {
      const stored = state.responses.get(identity.idempotencyKey);
      if (stored !== undefined) {
        stats.idempotentReplays += 1;
        return { ...stored, replayed: true };
      }
    }
    let answer: StoredResponse;
    try {
      const result = airlineOperations[identity.toolName](state.database, args);
      answer = { status: 200, body: JSON.stringify({ result }) };
      if (isWrite) {
        const mutationKey = identity.idempotencyKey ?? `(none)#${stats.mutationsApplied}`;
        const ledgerKey = `${identity.databaseKey}\u0000${mutationKey}`;
        const entry = applied.get(ledgerKey) ?? {
          databaseKey: identity.databaseKey,
          runId: identity.runId,
          idempotencyKey: mutationKey,
          toolName: identity.toolName,
          applications: 0,
        };
        entry.applications += 1;
        applied.set(ledgerKey, entry);
        stats.mutationsApplied += 1;
        stats.maxApplicationsPerKey = Math.max(stats.maxApplicationsPerKey, entry.applications);
      }
    } catch (error) {
      if (ToolError.is(error) && (error.kind === 'not_found' || error.kind === 'precondition' || error.kind === 'invalid_input')) {
        answer = { status: REFUSAL_STATUS[error.kind], body: errorBody(error.kind, error.message, error.toolCode) };
      } else {
        return { status: 500, body: errorBody('server', 'the tool crashed'), replayed: false };
      }
    }
    if (isWrite && identity.idempotencyKey !== undefined) state.responses.set(identity.idempotencyKey, answer);
    return { ...answer, replayed: false };
  };

  const hang = (response: ServerResponse) => {
    stats.responsesByStatus.hang = (stats.responsesByStatus.hang ?? 0) + 1;
    const timer = setTimeout(() => response.destroy(), profile.hangMaxMs ?? 30_000);
    timer.unref();
    response.on('close', () => clearTimeout(timer));
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    stats.requests += 1;
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const route = /^\/(?:runs\/([^/]+)\/)?tools\/([^/]+)$/.exec(url.pathname);
    if (request.method !== 'POST' || route === null) {
      send(response, 404, errorBody('not_found', `no route ${request.method ?? ''} ${url.pathname}; use POST /tools/<name>`));
      return;
    }
    const toolName = decodeURIComponent(route[2] as string);
    if (!isAirlineToolName(toolName)) {
      send(response, 404, errorBody('not_found', `unknown tool ${toolName}`, 'UNKNOWN_TOOL'));
      return;
    }
    const runId = headerValue(request, 'x-run-id') ?? (route[1] === undefined ? 'default' : decodeURIComponent(route[1]));
    const databaseKey = headerValue(request, 'x-database-key') ?? runId;
    const idempotencyKey = headerValue(request, 'idempotency-key');
    const text = await readBody(request);
    let args: unknown;
    try {
      args = text === undefined ? undefined : text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      args = undefined;
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      send(response, 400, errorBody('invalid_input', 'the body must be a JSON object of arguments'));
      return;
    }

    const state = stateOf(databaseKey);
    const counterKey = `${runId}|${toolName}`;
    const counter = state.callIndexes.get(counterKey) ?? { next: 0, byKey: new Map<string, number>() };
    state.callIndexes.set(counterKey, counter);
    let callIndex: number;
    let attempt = 1;
    if (idempotencyKey === undefined) {
      callIndex = counter.next++;
    } else {
      callIndex = counter.byKey.get(idempotencyKey) ?? counter.next++;
      counter.byKey.set(idempotencyKey, callIndex);
      const attemptKey = `${runId}|${idempotencyKey}`;
      attempt = (state.attempts.get(attemptKey) ?? 0) + 1;
      state.attempts.set(attemptKey, attempt);
    }
    const forced = options.faultHeader === true ? headerValue(request, 'x-inject-fault') : undefined;
    const fault: AirlineFault =
      forced === 'unavailable' || forced === 'rate_limit' || forced === 'hang' ? forced : drawFault(profile, { seed, runId, toolName, callIndex, attempt });
    stats.faults[fault] += 1;
    options.onRequest?.({ runId, databaseKey, toolName, idempotencyKey, callIndex, attempt, fault });
    const identity = { databaseKey, runId, toolName, idempotencyKey };
    switch (fault) {
      case 'unauthorized':
        send(response, 401, errorBody('auth', `the service rejected the credentials for ${toolName}`), { 'www-authenticate': 'Bearer' });
        return;
      case 'unavailable':
        send(response, 503, errorBody('server', 'service unavailable, try again later'));
        return;
      case 'rate_limit':
        send(response, 429, errorBody('rate_limit', 'too many requests'), { 'retry-after': String(profile.retryAfterSeconds ?? 1) });
        return;
      case 'hang':
        if (profile.hangAppliesMutation ?? true) execute(state, identity, args as Record<string, unknown>);
        hang(response);
        return;
      case 'none': {
        const answer = execute(state, identity, args as Record<string, unknown>);
        send(response, answer.status, answer.body, answer.replayed ? { 'idempotent-replayed': 'true' } : {});
        return;
      }
    }
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) send(response, 500, errorBody('server', 'internal error'));
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  if (options.unref === true) server.unref();

  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
    setFaultProfile: (next) => {
      profile = next;
    },
    stats: () => structuredClone(stats),
    database: (databaseKey) => databases.get(databaseKey)?.database,
    mutations: () => [...applied.values()].map((entry) => ({ ...entry })),
  };
}
