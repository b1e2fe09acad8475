/**
 * The few members of DBOS Transact (`@dbos-inc/dbos-sdk`) toolrun calls, typed structurally: pass
 * the `DBOS` class (or, for replays from another process, a `DBOSClient`) you import yourself, so
 * toolrun never loads a second copy of the SDK (DBOS keeps one registry per copy) and a user of
 * another engine never installs it.
 */

/** The workflow statuses toolrun asks DBOS for. */
export type DbosStatusName = 'MAX_RECOVERY_ATTEMPTS_EXCEEDED' | 'SUCCESS' | 'ERROR' | 'PENDING';

/** A workflow handle: its status and its result. */
export interface DbosWorkflowHandle<Return> {
  /** The workflow's status row, or `null` when there is no such workflow. */
  getStatus(): Promise<DbosWorkflowStatus | null>;
  /** Waits for the workflow's result; rejects with what the workflow threw. */
  getResult(): Promise<Return>;
}

/** A workflow's status as DBOS reports it (the fields toolrun reads). */
export interface DbosWorkflowStatus {
  /** The workflow's id (the run id, or `<runId>:replay:<n>`). */
  readonly workflowID: string;
  /** `PENDING`, `SUCCESS`, `ERROR`, `MAX_RECOVERY_ATTEMPTS_EXCEEDED`, `CANCELLED`, `ENQUEUED`, `DELAYED`. */
  readonly status: string;
  /** The registered name (`toolrun.agent` by default). */
  readonly workflowName: string;
  /** The workflow's arguments (when listed with `loadInput`). */
  readonly input?: unknown[];
  /** The workflow's return value (when listed with `loadOutput`). */
  readonly output?: unknown;
  /** What the workflow threw (status `ERROR`). */
  readonly error?: unknown;
  /** How many times the workflow was started or recovered. */
  readonly recoveryAttempts?: number;
}

/** One recorded step of a workflow: its function id (DBOS's step number) and name. */
export interface DbosStepInfo {
  /** DBOS's step number in the workflow (what `forkWorkflow` takes). */
  readonly functionID: number;
  /** The step's name (`toolrun.model:<step>`, `toolrun.tool:<step>:<call>`, `DBOS.sleep`, …). */
  readonly name: string;
  /** What the step returned. */
  readonly output: unknown;
  /** What the step threw, once DBOS stopped retrying it (`null` when it returned). */
  readonly error?: unknown;
}

/** What the agent workflow uses of the `DBOS` class (inside a launched DBOS process). */
export interface DbosEngine {
  /** `DBOS.registerWorkflow`: registers `func` under `config.name`, before `DBOS.launch()`. */
  registerWorkflow<Args extends unknown[], Return>(
    func: (...args: Args) => Promise<Return>,
    config?: { name?: string; maxRecoveryAttempts?: number },
  ): (...args: Args) => Promise<Return>;
  /** `DBOS.runStep`: runs `func` as a checkpointed step of the current workflow (retried by DBOS when `retriesAllowed`). */
  runStep<Return>(
    func: () => Promise<Return>,
    config?: { name?: string; retriesAllowed?: boolean; intervalSeconds?: number; maxAttempts?: number; backoffRate?: number },
  ): Promise<Return>;
  /** `DBOS.startWorkflow`: starts `target` under `params.workflowID` (a second start with the same id returns the first's handle). */
  startWorkflow<Args extends unknown[], Return>(
    target: (...args: Args) => Promise<Return>,
    params?: { workflowID?: string; queueName?: string },
  ): (...args: Args) => Promise<DbosWorkflowHandle<Return>>;
  /** `DBOS.sleep`: a durable sleep of the current workflow, in milliseconds. */
  sleep(durationMS: number): Promise<void>;
  /** The current workflow's id (`undefined` outside a workflow). */
  readonly workflowID: string | undefined;
}

/**
 * What a replay and a sweep use: the `DBOS` class in a launched process, or a `DBOSClient`
 * (`DBOSClient.create({ systemDatabaseUrl })`) anywhere else — the CLI, the dashboard, a drain.
 * A fork is executed by a DBOS process of the app that registered the workflow.
 */
export interface DbosControl {
  /** Starts a new workflow `options.newWorkflowID` with the steps of `workflowID` before `startStep` copied. */
  forkWorkflow(workflowID: string, startStep: number, options?: { newWorkflowID?: string }): Promise<unknown>;
  /** A handle on a workflow (it may not exist: its status is then `null`). */
  retrieveWorkflow<Return = unknown>(workflowID: string): DbosWorkflowHandle<Return>;
  /** Lists workflows by name, status or id prefix. */
  listWorkflows(input: {
    workflowName?: string;
    status?: DbosStatusName | DbosStatusName[];
    workflow_id_prefix?: string;
    workflowIDs?: string[];
    loadInput?: boolean;
    loadOutput?: boolean;
    limit?: number;
  }): Promise<DbosWorkflowStatus[]>;
  /** The recorded steps of a workflow; `undefined` when it does not exist. */
  listWorkflowSteps(workflowID: string): Promise<DbosStepInfo[] | undefined>;
  /** Resumes a workflow DBOS gave up on (its recovery attempts reset). */
  resumeWorkflow(workflowID: string): Promise<unknown>;
}
