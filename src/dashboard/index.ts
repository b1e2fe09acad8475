/**
 * The operator's dashboard for the two dead-letter queues (`toolrun dashboard`): a Hono
 * application over any `Stores` bundle, with the page's script and styles served as files.
 *
 * @packageDocumentation
 */
export { createDashboardApp, type DashboardApp, type DashboardAppOptions } from './dashboard-app.ts';
export { startDashboard, type RunningDashboard, type StartDashboardOptions } from './start-dashboard.ts';
export {
  backendConversationExpiry,
  DEFAULT_DASHBOARD_BOUNDS,
  type ConversationExpiryLookup,
  type DashboardBounds,
  type DashboardSource,
} from './dashboard-source.ts';
export { toolGroupOf, messageGroupOf, type ToolEntryFilter, type MessageEntryFilter, type EntryGroup, type EntryGroups } from './dashboard-entries.ts';
export { estimateReplay, runReplayJob, dlqView, type ReplayJob, type ReplayEstimate, type JobEntryOutcome, type ReplayJobOptions } from './dashboard-jobs.ts';
export type { QueueSample, DashboardAlert, BreakerView, FailureOverview, FailureSeries } from './dashboard-overview.ts';
export type { ToolEntryRow, MessageEntryRow, ToolEntryDetail } from './dashboard-detail.ts';
